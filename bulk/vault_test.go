package bulk

import "testing"

// The normalisation a vault round trip is exact modulo (docs/notes.md, "Vault sync").
func TestNormaliseNote(t *testing.T) {
	for _, c := range []struct{ title, in, want string }{
		{"Mond", "# Mond\n\nZiel.\n", "# Mond\n\nZiel.\n"},
		{"Mond", "\ufeff# Mond\r\n\r\nZiel.\r\n\r\n\r\n", "# Mond\n\nZiel.\n"},
		{"Saturn V", "Die Rakete.", "# Saturn V\n\nDie Rakete.\n"},
		{"Saturn V", "# Rakete\n\nText", "# Saturn V\n\n# Rakete\n\nText\n"},
		{"Leer", "", "# Leer\n"},
		{"Lisa", "---\nrole: PL\naliases: [Lisa, LM]\ncontact: {mail: l@x.org}\n---\n\n# Lisa\n", "---\naliases:\n  - Lisa\n  - LM\ncontact:\n  mail: l@x.org\nrole: PL\n---\n# Lisa\n"},
		{"Rule", "---\nnot closed\n# Rule\n", "# Rule\n\n---\nnot closed\n# Rule\n"},
	} {
		got, err := NormaliseNote(c.title, c.in)
		if err != nil || got != c.want {
			t.Errorf("NormaliseNote(%q, %q) = %q, %v; want %q", c.title, c.in, got, err, c.want)
		}
		if again, _ := NormaliseNote(c.title, got); again != got {
			t.Errorf("not idempotent: %q → %q", got, again)
		}
	}
	if _, err := NormaliseNote("Bad", "---\n: [\n---\n# Bad\n"); err == nil {
		t.Error("malformed front matter accepted")
	}
}

func TestNoteFileName(t *testing.T) {
	for in, want := range map[string]string{"Apollo": "Apollo", "a/b: c?": "a-b- c-", "  ": "untitled", "..": "untitled"} {
		if got := NoteFileName(in); got != want {
			t.Errorf("NoteFileName(%q) = %q, want %q", in, got, want)
		}
	}
}
