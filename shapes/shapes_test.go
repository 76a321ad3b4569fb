package shapes_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/shapes"
)

// writeDir writes files (name -> content) into a fresh temp dir.
func writeDir(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func mustDefault(t *testing.T) *shapes.Set {
	t.Helper()
	s, err := shapes.Default()
	if err != nil {
		t.Fatalf("Default: %v", err)
	}
	return s
}

func TestDefaultRelations(t *testing.T) {
	s := mustDefault(t)
	want := []string{
		"CAUSED_BY", "CAUSES", "CONTRADICTS", "DEPENDENCY_OF", "DEPENDS_ON",
		"FOR_CLIENT", "HAS_PART", "HAS_WORKSHOP", "OWNED_BY", "OWNS", "PART_OF",
		"REFERENCED_BY", "REFERENCES", "RELATES_TO", "SUPERSEDED_BY", "SUPERSEDES",
	}
	if got := s.Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v\nwant      %v", got, want)
	}
	if got := s.Domains(); !slices.Equal(got, []string{"default"}) {
		t.Errorf("Domains() = %v", got)
	}

	tests := []struct {
		name, inverse  string
		source, target []string
		maxCount       int
		symmetric      bool
	}{
		{"OWNS", "OWNED_BY", []string{"*"}, []string{"*"}, 0, false},
		{"OWNED_BY", "OWNS", []string{"*"}, []string{"*"}, 0, false},
		// FOR_CLIENT takes any target: the spec links it onto a plain memory.
		{"FOR_CLIENT", "HAS_WORKSHOP", []string{"*"}, []string{"*"}, 0, false},
		{"HAS_WORKSHOP", "FOR_CLIENT", []string{"*"}, []string{"*"}, 0, false},
		{"SUPERSEDES", "SUPERSEDED_BY", []string{"memory", "document"}, []string{"memory", "document"}, 0, false},
		{"SUPERSEDED_BY", "SUPERSEDES", []string{"memory", "document"}, []string{"memory", "document"}, 1, false},
		{"REFERENCES", "REFERENCED_BY", []string{"*"}, []string{"*"}, 0, false},
		{"RELATES_TO", "RELATES_TO", []string{"*"}, []string{"*"}, 0, true},
		{"CAUSED_BY", "CAUSES", []string{"*"}, []string{"*"}, 0, false},
		{"CONTRADICTS", "CONTRADICTS", []string{"*"}, []string{"*"}, 0, true},
		{"PART_OF", "HAS_PART", []string{"*"}, []string{"*"}, 0, false},
		{"DEPENDS_ON", "DEPENDENCY_OF", []string{"*"}, []string{"*"}, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, ok := s.Relation(tt.name)
			if !ok {
				t.Fatalf("%s not defined", tt.name)
			}
			if r.Inverse != tt.inverse || r.MaxCount != tt.maxCount || r.Symmetric != tt.symmetric ||
				!slices.Equal(r.Source, tt.source) || !slices.Equal(r.Target, tt.target) {
				t.Errorf("got %+v", r)
			}
			if r.Domain != "default" || r.File != "shapes/default.yaml" || r.Line == 0 || r.Description == "" {
				t.Errorf("provenance/description missing: %+v", r)
			}
		})
	}
}

func TestRelationReturnsCopy(t *testing.T) {
	s := mustDefault(t)
	r, _ := s.Relation("SUPERSEDES")
	r.Target[0] = "anything"
	if again, _ := s.Relation("SUPERSEDES"); again.Target[0] != "memory" {
		t.Fatalf("mutating a returned Relation changed the Set: %v", again.Target)
	}
}

func TestSchemaDQL(t *testing.T) {
	s := mustDefault(t)
	dql := s.SchemaDQL()
	lines := strings.Split(strings.TrimSuffix(dql, "\n"), "\n")
	if len(lines) != len(s.Names()) {
		t.Fatalf("%d lines for %d relations:\n%s", len(lines), len(s.Names()), dql)
	}
	if !slices.IsSorted(lines) {
		t.Errorf("lines not sorted:\n%s", dql)
	}
	if !slices.Contains(lines, "<FOR_CLIENT>: [uid] @reverse @count .") ||
		!slices.Contains(lines, "<HAS_WORKSHOP>: [uid] @reverse @count .") {
		t.Errorf("missing FOR_CLIENT/HAS_WORKSHOP predicate:\n%s", dql)
	}
	s2, err := shapes.Load("")
	if err != nil {
		t.Fatal(err)
	}
	if s2.SchemaDQL() != dql {
		t.Error("SchemaDQL differs between two loads of the same shapes")
	}
}

func TestNodeClasses(t *testing.T) {
	tests := []struct {
		name             string
		kind, memoryType string
		tags             []string
		want             []string
	}{
		{"memory with type", "memory", "semantic", nil, []string{"memory", "semantic"}},
		{"document without type", "document", "", nil, []string{"document"}},
		{"class tags", "memory", "reference", []string{"class:client", "kunde", "class:person"}, []string{"memory", "reference", "client", "person"}},
		{"case and spaces folded", "Memory", "Episodic", []string{" Class:Client ", "CLASS:workshop"}, []string{"memory", "episodic", "client", "workshop"}},
		{"duplicates dropped", "memory", "semantic", []string{"class:memory", "class:client", "class:client"}, []string{"memory", "semantic", "client"}},
		{"empty class tag ignored", "memory", "", []string{"class:", "client"}, []string{"memory"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := shapes.NodeClasses(tt.kind, tt.memoryType, tt.tags); !slices.Equal(got, tt.want) {
				t.Errorf("NodeClasses = %v, want %v", got, tt.want)
			}
		})
	}
}

// crm is an extra domain used by several tests: it restricts both ends and
// declares one inverse explicitly.
const crm = `domain: crm
description: Customer relations.
relations:
  - name: EMPLOYS
    description: A client employs a person.
    source: [client]
    target: [person]
    inverse: EMPLOYED_BY
  - name: HAS_CONTACT
    description: The client's main contact person.
    source: client
    target: person
    inverse: CONTACT_OF
    max_count: 1
  - name: CONTACT_OF
    description: The person is the main contact of the client.
    inverse: HAS_CONTACT
    max_count: 3
`

func TestCheck(t *testing.T) {
	dir := writeDir(t, map[string]string{"crm.yaml": crm})
	s, err := shapes.Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	var (
		episodic = shapes.NodeClasses("memory", "episodic", nil)
		client   = shapes.NodeClasses("memory", "semantic", []string{"class:client"})
		person   = shapes.NodeClasses("memory", "semantic", []string{"class:person"})
		document = shapes.NodeClasses("document", "", nil)
	)
	tests := []struct {
		name       string
		rel        string
		from, to   []string
		existing   int
		code       string // "" = allowed
		constraint string
		message    string
	}{
		{"any to client", "FOR_CLIENT", episodic, client, 0, "", "", ""},
		{"unbounded ignores count", "REFERENCES", document, episodic, 1000, "", "", ""},
		{"inverse from client", "HAS_WORKSHOP", client, episodic, 5, "", "", ""},
		{"symmetric", "CONTRADICTS", episodic, document, 0, "", "", ""},
		{"supersedes first", "SUPERSEDES", document, document, 0, "", "", ""},
		{"lower case", "for_client", episodic, client, 0, knowmind.EINVALID, "",
			`rel_type "for_client" must be UPPER_SNAKE_CASE (A-Z, 0-9, single underscores, starting with a letter) (did you mean FOR_CLIENT?)`},
		{"empty", "", episodic, client, 0, knowmind.EINVALID, "", `rel_type "" is empty`},
		{"reserved", "Memory.id", episodic, client, 0, knowmind.EINVALID, "", "reserved predicate"},
		{"too long", strings.Repeat("A", 65), episodic, client, 0, knowmind.EINVALID, "", "longer than 64"},
		{"double underscore", "FOR__CLIENT", episodic, client, 0, knowmind.EINVALID, "", "UPPER_SNAKE_CASE"},
		{"undefined", "LIKES", episodic, client, 0, knowmind.ECONSTRAINT, "rel_type",
			"SHACL constraint violated: rel_type LIKES is not defined in domains crm, default (allowed: CAUSED_BY, CAUSES, CONTACT_OF, "},
		{"spec example: FOR_CLIENT onto a plain memory", "FOR_CLIENT", episodic, episodic, 0, "", "", ""},
		{"target not person", "EMPLOYS", client, episodic, 0, knowmind.ECONSTRAINT, "target_class",
			"SHACL constraint violated: target class memory, episodic not allowed for EMPLOYS (allowed: person); " +
				"the target memory needs one of the tags class:person"},
		{"source not client", "EMPLOYS", person, person, 0, knowmind.ECONSTRAINT, "source_class",
			"SHACL constraint violated: source class memory, semantic, person not allowed for EMPLOYS (allowed: client)"},
		{"source no classes", "EMPLOYS", nil, person, 0, knowmind.ECONSTRAINT, "source_class", "source class (none) not allowed"},
		{"supersedes second (an upload replacing several)", "SUPERSEDES", document, document, 1, "", "", ""},
		{"superseded_by second", "SUPERSEDED_BY", episodic, episodic, 1, knowmind.ECONSTRAINT, "max_count", "max_count 1 exceeded"},
		{"supersedes needs memory or document", "SUPERSEDES", []string{"client"}, document, 0, knowmind.ECONSTRAINT, "source_class",
			"(allowed: memory, document)"},
		{"explicit inverse own max_count", "CONTACT_OF", person, client, 2, "", "", ""},
		{"explicit inverse max_count hit", "CONTACT_OF", person, client, 3, knowmind.ECONSTRAINT, "max_count", "max_count 3 exceeded for CONTACT_OF"},
		{"implicit inverse classes swapped", "EMPLOYED_BY", client, person, 0, knowmind.ECONSTRAINT, "source_class", "(allowed: person)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := s.Check(tt.rel, tt.from, tt.to, tt.existing)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Check = %v, want nil", err)
				}
				return
			}
			e := knowmind.AsError(err)
			if e == nil || e.Code != tt.code {
				t.Fatalf("Check = %v, want code %s", err, tt.code)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not contain %q", e.Message, tt.message)
			}
			if tt.code == knowmind.EINVALID && e.Param != "rel_type" {
				t.Errorf("Param = %q, want rel_type", e.Param)
			}
			if tt.code == knowmind.ECONSTRAINT {
				if got := e.Data["constraint"]; got != tt.constraint {
					t.Errorf("Data[constraint] = %v, want %s", got, tt.constraint)
				}
				if got := e.Data["rel_type"]; got != tt.rel {
					t.Errorf("Data[rel_type] = %v, want %s", got, tt.rel)
				}
			}
		})
	}
}

func TestCheckDefaultDomainMessage(t *testing.T) {
	err := mustDefault(t).Check("FOO", nil, nil, 0)
	want := "SHACL constraint violated: rel_type FOO is not defined in domain default (allowed: CAUSED_BY, CAUSES, " +
		"CONTRADICTS, DEPENDENCY_OF, DEPENDS_ON, FOR_CLIENT, HAS_PART, HAS_WORKSHOP, OWNED_BY, OWNS, PART_OF, " +
		"REFERENCED_BY, REFERENCES, RELATES_TO, SUPERSEDED_BY, SUPERSEDES)"
	e := knowmind.AsError(err)
	if e == nil || e.Message != want {
		t.Fatalf("Check = %v, want %q", err, want)
	}
	// The allowed types travel in the error's data too, for agents that read it.
	if allowed, _ := e.Data["allowed"].([]string); !slices.Equal(allowed, mustDefault(t).Names()) {
		t.Errorf("Data[allowed] = %v, want every relation type", e.Data["allowed"])
	}
}

// The example domain in shapes/examples loads on top of the default and
// shows a class constraint whose error says which tag satisfies it.
func TestExampleShapeFile(t *testing.T) {
	s, err := shapes.Load("examples")
	if err != nil {
		t.Fatalf("Load(examples): %v", err)
	}
	if !slices.Equal(s.Domains(), []string{"crm", "default"}) {
		t.Fatalf("Domains() = %v", s.Domains())
	}
	client := shapes.NodeClasses("memory", "semantic", []string{"class:client"})
	person := shapes.NodeClasses("memory", "semantic", []string{"kunde", "class:person"})
	if err := s.Check("EMPLOYS", client, person, 0); err != nil {
		t.Fatalf("EMPLOYS client -> person: %v", err)
	}
	e := knowmind.AsError(s.Check("EMPLOYS", client, shapes.NodeClasses("memory", "semantic", []string{"person"}), 0))
	if e == nil || e.Data["constraint"] != "target_class" || !strings.Contains(e.Data["fix"].(string), "class:person") {
		t.Fatalf("EMPLOYS onto an untagged memory: %v (data %v), want target_class naming the tag class:person", e, e.Data)
	}
}

func TestLoadExtraFileAddsRelations(t *testing.T) {
	dir := writeDir(t, map[string]string{
		"crm.yaml": crm,
		// A later file may repeat a relation identically (descriptions aside).
		"more.yml": `domain: projects
relations:
  - name: FOR_CLIENT
    description: repeated on purpose
    inverse: HAS_WORKSHOP
  - name: BLOCKS
    description: The source blocks the target.
    inverse: BLOCKED_BY
  - name: KNOWS
    description: Two people know each other.
    symmetric: true
    source: [person]
`,
		"notes.txt": "not a shape file",
	})
	s, err := shapes.Load(dir)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	names := s.Names()
	for _, n := range []string{"EMPLOYS", "EMPLOYED_BY", "HAS_CONTACT", "CONTACT_OF", "BLOCKS", "BLOCKED_BY", "KNOWS", "FOR_CLIENT", "HAS_WORKSHOP"} {
		if !slices.Contains(names, n) {
			t.Errorf("Names() lacks %s: %v", n, names)
		}
	}
	if want := len(mustDefault(t).Names()) + 7; len(names) != want {
		t.Errorf("%d names, want %d: %v", len(names), want, names)
	}
	if got := s.Domains(); !slices.Equal(got, []string{"crm", "default", "projects"}) {
		t.Errorf("Domains() = %v", got)
	}
	if !strings.Contains(s.SchemaDQL(), "<EMPLOYED_BY>: [uid] @reverse @count .\n") {
		t.Errorf("SchemaDQL lacks EMPLOYED_BY:\n%s", s.SchemaDQL())
	}

	emp, _ := s.Relation("EMPLOYED_BY")
	want := shapes.Relation{Name: "EMPLOYED_BY", Inverse: "EMPLOYS", Source: []string{"person"}, Target: []string{"client"},
		Domain: "crm", File: filepath.Join(dir, "crm.yaml"), Line: 8}
	if emp.Name != want.Name || emp.Inverse != want.Inverse || !slices.Equal(emp.Source, want.Source) ||
		!slices.Equal(emp.Target, want.Target) || emp.Domain != want.Domain || emp.File != want.File || emp.Line != want.Line {
		t.Errorf("EMPLOYED_BY = %+v\nwant          %+v", emp, want)
	}
	// An explicit inverse without classes takes them from its partner, swapped.
	contact, _ := s.Relation("CONTACT_OF")
	if !slices.Equal(contact.Source, []string{"person"}) || !slices.Equal(contact.Target, []string{"client"}) || contact.MaxCount != 3 || contact.Line != 15 {
		t.Errorf("CONTACT_OF = %+v", contact)
	}
	// A symmetric relation that names one end has it at both.
	if knows, _ := s.Relation("KNOWS"); knows.Inverse != "KNOWS" || !slices.Equal(knows.Target, []string{"person"}) {
		t.Errorf("KNOWS = %+v", knows)
	}
	// Relations lists the same types as Names, in the same order.
	var listed []string
	for _, r := range s.Relations() {
		listed = append(listed, r.Name)
	}
	if !slices.Equal(listed, names) {
		t.Errorf("Relations() names %v, Names() %v", listed, names)
	}
	// The first declaration wins; the repeat does not move FOR_CLIENT's provenance.
	if fc, _ := s.Relation("FOR_CLIENT"); fc.File != "shapes/default.yaml" {
		t.Errorf("FOR_CLIENT came from %s", fc.File)
	}
}

func TestLoadMissingDir(t *testing.T) {
	if _, err := shapes.Load(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Fatal("Load of a missing dir succeeded")
	}
}

func TestLoadEmptyDirIsDefault(t *testing.T) {
	s, err := shapes.Load(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.Names(), mustDefault(t).Names()) {
		t.Errorf("Names() = %v", s.Names())
	}
}

// rel builds a one-relation shape file; the relation's keys start on line 4.
func rel(body string) string {
	return "domain: test\nrelations:\n  - name: " + body
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  []string // each must appear in the error; the first names file:line
	}{
		{"bad yaml", map[string]string{"a.yaml": "domain: test\nrelations:\n  - name: [FOO\n"},
			[]string{"a.yaml:3: invalid YAML: did not find expected ',' or ']'"}},
		{"tab indentation", map[string]string{"a.yaml": "domain: test\nrelations:\n\t- name: FOO\n"},
			[]string{"a.yaml:3: invalid YAML"}},
		{"mapping in plain scalar", map[string]string{"a.yaml": "domain: test\nrelations:\n  - name: FOO\n    description: a: b\n"},
			[]string{"a.yaml:4: invalid YAML: mapping values are not allowed in this context"}},
		{"bad indentation", map[string]string{"a.yaml": "domain: test\nrelations:\n  - name: FOO\n    description: x\n   inverse: BAR\n"},
			[]string{"a.yaml:3: invalid YAML: did not find expected '-' indicator (in the list or mapping that starts on this line)"}},
		{"empty file", map[string]string{"a.yaml": ""}, []string{"a.yaml:1: empty file"}},
		{"two documents", map[string]string{"a.yaml": "domain: test\nrelations: []\n---\ndomain: x\n"},
			[]string{"a.yaml:3: only one YAML document per file"}},
		{"top level list", map[string]string{"a.yaml": "- domain: test\n"}, []string{"a.yaml:1: top level must be a mapping"}},
		{"unknown top key", map[string]string{"a.yaml": "domain: test\nrelation:\n  - name: FOO\n"},
			[]string{`a.yaml:2: unknown key "relation"`, "a.yaml:1: missing relations"}},
		{"missing domain", map[string]string{"a.yaml": "relations: []\n"}, []string{"a.yaml:1: missing domain"}},
		{"bad domain", map[string]string{"a.yaml": "domain: CRM\nrelations: []\n"}, []string{`a.yaml:1: domain "CRM" must be lower case`}},
		{"relations not a list", map[string]string{"a.yaml": "domain: test\nrelations: FOO\n"}, []string{"a.yaml:2: relations must be a list"}},
		{"duplicate key", map[string]string{"a.yaml": "domain: test\ndomain: other\nrelations: []\n"},
			[]string{`a.yaml:2: duplicate key "domain" (first at line 1)`}},
		{"relation not a mapping", map[string]string{"a.yaml": "domain: test\nrelations:\n  - FOO\n"},
			[]string{"a.yaml:3: each relation must be a mapping"}},
		{"missing name", map[string]string{"a.yaml": "domain: test\nrelations:\n  - description: x\n    inverse: FOO\n"},
			[]string{"a.yaml:3: relation without name"}},
		{"unknown relation key", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: BAR\n    max_cout: 1\n")},
			[]string{`a.yaml:6: unknown key "max_cout"`}},
		{"not upper snake", map[string]string{"a.yaml": rel("forClient\n    description: x\n    inverse: BAR\n")},
			[]string{`a.yaml:3: relation name "forClient" must be UPPER_SNAKE_CASE`}},
		{"reserved name", map[string]string{"a.yaml": rel("Memory.id\n    description: x\n    inverse: BAR\n")},
			[]string{`a.yaml:3: relation name "Memory.id" collides with reserved predicate names`}},
		{"dgraph name", map[string]string{"a.yaml": rel("dgraph.type\n    description: x\n    inverse: BAR\n")},
			[]string{`a.yaml:3: relation name "dgraph.type" collides with reserved`}},
		{"name too long", map[string]string{"a.yaml": rel(strings.Repeat("A", 65) + "\n    description: x\n    inverse: BAR\n")},
			[]string{"a.yaml:3:", "longer than 64"}},
		{"name not a string", map[string]string{"a.yaml": rel("12\n    description: x\n    inverse: BAR\n")},
			[]string{"a.yaml:3: name must be a string"}},
		{"bad inverse name", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: has-foo\n")},
			[]string{`a.yaml:5: inverse name "has-foo" must be UPPER_SNAKE_CASE`}},
		{"missing description", map[string]string{"a.yaml": rel("FOO\n    inverse: BAR\n")},
			[]string{"a.yaml:3: relation FOO: missing description"}},
		{"no inverse", map[string]string{"a.yaml": rel("FOO\n    description: x\n")},
			[]string{"a.yaml:3: relation FOO needs an inverse (inverse: NAME) or symmetric: true"}},
		{"inverse is itself", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: FOO\n")},
			[]string{"a.yaml:5: relation FOO names itself as inverse; write symmetric: true instead"}},
		{"symmetric with other inverse", map[string]string{"a.yaml": rel("FOO\n    description: x\n    symmetric: true\n    inverse: BAR\n")},
			[]string{"a.yaml:6: relation FOO is symmetric (its own inverse) but names inverse BAR"}},
		{"symmetric not bool", map[string]string{"a.yaml": rel("FOO\n    description: x\n    symmetric: maybe\n")},
			[]string{"a.yaml:5: symmetric must be true or false"}},
		{"symmetric unequal ends", map[string]string{"a.yaml": rel("FOO\n    description: x\n    symmetric: true\n    source: [person]\n    target: [client]\n")},
			[]string{"a.yaml:3: relation FOO is symmetric, so source [person] and target [client] must be equal"}},
		{"max_count negative", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: BAR\n    max_count: -1\n")},
			[]string{"a.yaml:6: max_count must be a whole number >= 0"}},
		{"max_count text", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: BAR\n    max_count: one\n")},
			[]string{"a.yaml:6: max_count must be a whole number"}},
		{"class upper case", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: BAR\n    target: [Client]\n")},
			[]string{`a.yaml:6: target class "Client" must be lower case`}},
		{"star not alone", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: BAR\n    source: [\"*\", client]\n")},
			[]string{`a.yaml:6: source "*" means any class and must stand alone`}},
		{"empty class list", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: BAR\n    source: []\n")},
			[]string{`a.yaml:6: source must name at least one class`}},
		{"class map", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: BAR\n    source: {a: b}\n")},
			[]string{`a.yaml:6: source must be a list of class names`}},
		{"alias", map[string]string{"a.yaml": "domain: test\nrelations:\n  - name: FOO\n    description: &d x\n    inverse: BAR\n  - name: BAZ\n    description: *d\n    inverse: QUX\n"},
			[]string{"a.yaml:7: YAML aliases are not supported"}},
		{"inverse conflict", map[string]string{"a.yaml": `domain: test
relations:
  - name: A_REL
    description: x
    inverse: B_REL
  - name: B_REL
    description: y
    inverse: C_REL
`}, []string{"a.yaml:5: inverse conflict: A_REL says inverse B_REL, but B_REL (", "a.yaml:6) says inverse C_REL"}},
		{"inverse conflict across files", map[string]string{
			"a.yaml": "domain: test\nrelations:\n  - name: A_REL\n    description: x\n    inverse: B_REL\n",
			"b.yaml": "domain: other\nrelations:\n  - name: B_REL\n    description: y\n    inverse: C_REL\n",
		}, []string{"a.yaml:5: inverse conflict: A_REL says inverse B_REL, but B_REL (", "b.yaml:3) says inverse C_REL"}},
		{"two relations claim one implicit inverse", map[string]string{"a.yaml": `domain: test
relations:
  - name: A_REL
    description: x
    inverse: X_REL
  - name: C_REL
    description: y
    inverse: X_REL
`}, []string{"a.yaml:8: inverse conflict: C_REL and A_REL (", "a.yaml:3) both name X_REL as their inverse"}},
		{"inverse is symmetric", map[string]string{"a.yaml": rel("FOO\n    description: x\n    inverse: RELATES_TO\n")},
			[]string{"a.yaml:5: inverse conflict: FOO says inverse RELATES_TO, but RELATES_TO (shapes/default.yaml:", ") is symmetric"}},
		{"explicit inverse classes disagree", map[string]string{"a.yaml": `domain: test
relations:
  - name: A_REL
    description: x
    target: [client]
    inverse: B_REL
  - name: B_REL
    description: y
    source: [person]
    inverse: A_REL
`}, []string{"a.yaml:3: relation A_REL (source [*], target [client]) and its inverse B_REL (", "a.yaml:7, source [person], target [*]) must have swapped classes"}},
		{"redefines default", map[string]string{"a.yaml": rel("FOR_CLIENT\n    description: x\n    target: client\n    inverse: HAS_WORKSHOP\n")},
			[]string{"a.yaml:3: relation FOR_CLIENT already defined in shapes/default.yaml:", "(domain default) with a different target"}},
		{"duplicate across two files", map[string]string{
			"a.yaml": "domain: one\nrelations:\n  - name: FOO\n    description: x\n    inverse: BAR\n    max_count: 1\n",
			"b.yaml": "domain: two\nrelations:\n  - name: FOO\n    description: x\n    inverse: BAZ\n",
		}, []string{"b.yaml:3: relation FOO already defined in ", "a.yaml:3 (domain one) with a different inverse, max_count"}},
		{"every problem reported", map[string]string{"a.yaml": `domain: test
relations:
  - name: bad
    description: x
    inverse: BAR
  - name: GOOD
    description: x
    inverse: OTHER
    colour: red
`}, []string{`a.yaml:3: relation name "bad"`, `a.yaml:9: unknown key "colour"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := writeDir(t, tt.files)
			_, err := shapes.Load(dir)
			if err == nil {
				t.Fatal("Load succeeded")
			}
			var fe *shapes.FileError
			if !errors.As(err, &fe) {
				t.Errorf("error %v is no *FileError", err)
			}
			msg := err.Error()
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n  %s\ndoes not contain\n  %s", msg, w)
				}
			}
			if !strings.HasPrefix(msg, dir) {
				t.Errorf("error %q does not start with the file path", msg)
			}
		})
	}
}

func TestEntityTypesAndCategories(t *testing.T) {
	set, err := shapes.Default()
	if err != nil {
		t.Fatal(err)
	}
	if got := set.EntityTypes(); !slices.Equal(got, []string{"person", "organisation", "project", "place"}) {
		t.Fatalf("entity types %v", got)
	}
	if got := set.Categories(); !slices.Contains(got, "decision") {
		t.Fatalf("categories %v", got)
	}
	dir := t.TempDir()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("crm.yaml", "domain: crm\nentity_types: [client, person]\nrelations: []\n")
	set, err = shapes.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.EntityTypes(); !slices.Equal(got, []string{"person", "organisation", "project", "place", "client"}) {
		t.Fatalf("merged entity types %v", got)
	}
	write("crm.yaml", "domain: crm\nentity_types: [\"*\"]\nrelations: []\n")
	if _, err := shapes.Load(dir); err == nil || !strings.Contains(err.Error(), "entity_types") {
		t.Fatalf("want an entity_types error, got %v", err)
	}
}
