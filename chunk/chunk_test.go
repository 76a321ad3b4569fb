package chunk_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knowmind/knowmind/chunk"
)

func TestSplitHeadingsKeepPath(t *testing.T) {
	doc := `Intro before any heading.

# Handbuch

Allgemeines.

## Onboarding ##

Erster Tag.

### Tag 1

Schlüssel abholen.

## Urlaub

Antrag stellen.

` + "```" + `
# not a heading inside a fence
` + "```" + `

#hashtag is text
`
	got := chunk.Split(doc, chunk.Options{})
	want := []chunk.Chunk{
		{0, "", "Intro before any heading."},
		{1, "Handbuch", "Allgemeines."},
		{2, "Handbuch > Onboarding", "Erster Tag."},
		{3, "Handbuch > Onboarding > Tag 1", "Schlüssel abholen."},
		{4, "Handbuch > Urlaub", "Antrag stellen.\n\n```\n# not a heading inside a fence\n```\n\n#hashtag is text"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d chunks: %+v", len(got), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("chunk %d = %+v, want %+v", i, got[i], want[i])
		}
	}
}

func TestSplitSkippedLevelAndOnlyHeadings(t *testing.T) {
	got := chunk.Split("# A\n### C\ntext", chunk.Options{})
	if len(got) != 1 || got[0].Heading != "A > C" || got[0].Text != "text" {
		t.Fatalf("got %+v", got)
	}
	got = chunk.Split("# Only a heading\n", chunk.Options{})
	if len(got) != 1 || got[0].Text != "# Only a heading" {
		t.Fatalf("heading-only text: got %+v", got)
	}
	if got := chunk.Split(" \n\n ", chunk.Options{}); len(got) != 0 {
		t.Fatalf("blank text: got %+v", got)
	}
}

func TestSplitParagraphsPackedUnderTarget(t *testing.T) {
	para := strings.Repeat("word ", 59) + "end." // 299 runes
	body := strings.Join([]string{para, para, para, para, para}, "\n\n")
	got := chunk.Split(body, chunk.Options{Target: 1000})
	// 3 paragraphs + 2 separators = 901 ≤ 1000; a fourth would exceed.
	if len(got) != 2 {
		t.Fatalf("got %d chunks, want 2", len(got))
	}
	if strings.Count(got[0].Text, "end.") != 3 || strings.Count(got[1].Text, "end.") != 2 {
		t.Fatalf("paragraphs split mid-way: %q", got[0].Text)
	}
}

func TestSplitLongParagraphOverlaps(t *testing.T) {
	var b strings.Builder
	for i := range 200 {
		b.WriteString("Satz nummer ")
		b.WriteString(strings.Repeat("x", i%7+1))
		b.WriteString(" endet hier. ")
	}
	para := strings.TrimSpace(b.String())
	got := chunk.Split(para, chunk.Options{})
	if len(got) < 3 {
		t.Fatalf("got %d chunks", len(got))
	}
	for i, c := range got {
		if n := utf8.RuneCountInString(c.Text); n > chunk.DefaultTarget {
			t.Errorf("chunk %d has %d runes > %d", i, n, chunk.DefaultTarget)
		}
		if c.Position != i {
			t.Errorf("chunk %d has position %d", i, c.Position)
		}
		if i > 0 {
			// Cut at sentence ends, the next window starts inside the previous one.
			if !strings.HasSuffix(got[i-1].Text, ".") {
				t.Errorf("chunk %d does not end at a sentence: %q", i-1, got[i-1].Text[len(got[i-1].Text)-20:])
			}
			head := c.Text[:40]
			if !strings.Contains(got[i-1].Text, head) {
				t.Errorf("chunk %d does not overlap its predecessor: starts %q", i, head)
			}
		}
	}
	// Every word of the input survives.
	joined := ""
	for _, c := range got {
		joined += " " + c.Text
	}
	for _, w := range strings.Fields(para) {
		if !strings.Contains(joined, w) {
			t.Fatalf("word %q lost", w)
		}
	}
}

func TestSplitUnbreakableText(t *testing.T) {
	s := strings.Repeat("ä", 3000)
	got := chunk.Split(s, chunk.Options{})
	total := 0
	for _, c := range got {
		if n := utf8.RuneCountInString(c.Text); n > chunk.DefaultTarget || !utf8.ValidString(c.Text) {
			t.Fatalf("bad window of %d runes", n)
		}
		total += utf8.RuneCountInString(c.Text)
	}
	if total < 3000 {
		t.Fatalf("windows cover %d of 3000 runes", total)
	}
}

func TestDetectLanguage(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Alle Service-Mitarbeitenden absolvieren die QM-Schulung jährlich.", chunk.German},
		{"Müller GmbH, Industriestraße 7, 32756 Detmold.", chunk.German},
		{"The onboarding process starts on the first day with a tour of the office.", chunk.English},
		{"Kubernetes", chunk.English},
		{"", chunk.English},
	} {
		if got := chunk.DetectLanguage(tc.text); got != tc.want {
			t.Errorf("DetectLanguage(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

func TestSplitHeadingsBounded(t *testing.T) {
	long := strings.Repeat("Ü", 20_000)
	doc := "# " + long + "\n## " + long + "\n### " + long + "\n#### " + long + "\nbody\n"
	got := chunk.Split(doc, chunk.Options{})
	if len(got) != 1 {
		t.Fatalf("got %d chunks", len(got))
	}
	h := got[0].Heading
	if n := utf8.RuneCountInString(h); n > chunk.MaxHeadingPathChars || !strings.HasSuffix(h, "…") || !utf8.ValidString(h) {
		t.Fatalf("heading of %d runes (max %d): %q…", n, chunk.MaxHeadingPathChars, h[:40])
	}
	first, _, _ := strings.Cut(h, " > ")
	if n := utf8.RuneCountInString(first); n != chunk.MaxHeadingChars {
		t.Fatalf("first level has %d runes, want %d", n, chunk.MaxHeadingChars)
	}
}

// Every run is cut to MaxChunkBytes, whatever it is made of: the full-text
// index sees no word longer than a chunk (graph/guard.go).
func TestSplitBoundsEveryRunInBytes(t *testing.T) {
	for name, text := range map[string]string{
		"headings only":  "# " + strings.Repeat("b", 70_000),
		"heading levels": "# T\n## " + strings.Repeat("c", 70_000),
		"one token":      strings.Repeat("x", 200_000),
		"url":            "https://example.org/" + strings.Repeat("a/b?c=d&", 20_000),
		"base64":         strings.Repeat("QUJDRA+/", 20_000),
		"cjk":            strings.Repeat("知識", 30_000),
		"emoji":          strings.Repeat("\U0001F600", 30_000),
		"combining":      "a" + strings.Repeat("\u0301", 40_000),
		"invalid utf-8":  strings.Repeat("\xff", 30_000),
		"wide target":    strings.Repeat("\U0001F600", 3_000),
	} {
		got := chunk.Split(text, chunk.Options{Target: 2900})
		if len(got) < 2 {
			t.Errorf("%s: %d chunks", name, len(got))
		}
		for i, c := range got {
			if len(c.Text) > chunk.MaxChunkBytes {
				t.Errorf("%s: chunk %d has %d bytes", name, i, len(c.Text))
			}
		}
	}
}
