package runes

import "testing"

func TestCutAndTruncate(t *testing.T) {
	for _, c := range []struct {
		s        string
		n        int
		cut, trn string
	}{
		{"short", 10, "short", "short"},
		{"exactly", 7, "exactly", "exactly"},
		{"Grüße aus Köln", 5, "Grüße", "Grüß…"},
		{"Grüße aus Köln", 7, "Grüße a", "Grüße…"}, // the space before "…" is dropped
		{"äöü", 0, "", ""},
		{"日本語のテキスト", 3, "日本語", "日本…"},
	} {
		if got := Cut(c.s, c.n); got != c.cut {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.s, c.n, got, c.cut)
		}
		if got := Truncate(c.s, c.n); got != c.trn {
			t.Errorf("Truncate(%q, %d) = %q, want %q", c.s, c.n, got, c.trn)
		}
	}
}
