package shapes

import "testing"

// FuzzParse: any shape file is read (with the default domain) into a set or
// refused with errors, never a panic; a built set finds every relation it names.
func FuzzParse(f *testing.F) {
	f.Add([]byte("domain: test\ndescription: d\nrelations:\n  - name: HAS_PRIMARY\n    description: x\n    source: [\"*\"]\n    target: [client]\n    inverse: PRIMARY_OF\n    max_count: 1\n"))
	f.Add([]byte("relations: [{name: OWNS, inverse: OWNED_BY}]"))
	f.Add([]byte("relations: &x [*x]\n"))
	f.Add([]byte("relations:\n  - name: 'X'\n    max_count: -1\n"))
	def, err := defaultFS.ReadFile("default.yaml")
	if err != nil {
		f.Fatal(err)
	}
	base, errs := parseFile(defaultFile, def)
	if len(errs) > 0 {
		f.Fatal(errs)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fd, errs := parseFile("fuzz.yaml", data)
		if len(errs) > 0 {
			return
		}
		set, errs := build([]fileDecls{base, fd})
		if len(errs) > 0 {
			return
		}
		for _, name := range set.Names() {
			if _, ok := set.Relation(name); !ok {
				t.Fatalf("relation %q listed but not found", name)
			}
		}
	})
}
