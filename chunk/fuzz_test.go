package chunk_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/knowmind/knowmind/chunk"
)

// FuzzSplit: any text splits without panicking into valid chunks — in
// order, each within the size and heading bounds, valid UTF-8 where the
// input is.
func FuzzSplit(f *testing.F) {
	f.Add("# A\n## B\ntext\n\nmore text", 0, 0)
	f.Add("```\n# not a heading\n```\n#hashtag\n   ### three ###\nbody", 50, 10)
	f.Add(strings.Repeat("ä", 3000), 100, 99)
	f.Add("# "+strings.Repeat("h", 500)+"\n"+strings.Repeat("## b\nx\n\n", 20), 0, 0)
	f.Add("\r\n\r\n#\r\n", 1, 1)
	f.Add("# "+strings.Repeat("b", 70_000), 0, 0)
	f.Add(strings.Repeat("\U0001F600", 5000), 2999, 0)
	f.Add("a"+strings.Repeat("\u0301", 20_000), 0, 0)
	f.Fuzz(func(t *testing.T, text string, target, overlap int) {
		target, overlap = target%3000, overlap%3000
		opt := chunk.Options{Target: target, Overlap: overlap}
		limit := target
		if limit <= 0 {
			limit = chunk.DefaultTarget
		}
		got := chunk.Split(text, opt)
		for i, c := range got {
			if c.Position != i {
				t.Fatalf("chunk %d has position %d", i, c.Position)
			}
			if utf8.ValidString(text) && (!utf8.ValidString(c.Text) || !utf8.ValidString(c.Heading)) {
				t.Fatalf("chunk %d is not valid UTF-8", i)
			}
			if n := utf8.RuneCountInString(c.Heading); n > chunk.MaxHeadingPathChars {
				t.Fatalf("chunk %d heading has %d runes", i, n)
			}
			if n := utf8.RuneCountInString(c.Text); n > limit {
				t.Fatalf("chunk %d has %d runes > %d", i, n, limit)
			}
			if len(c.Text) > chunk.MaxChunkBytes {
				t.Fatalf("chunk %d has %d bytes > %d", i, len(c.Text), chunk.MaxChunkBytes)
			}
		}
	})
}
