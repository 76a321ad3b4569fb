// Package chunk splits the text of a memory or document into the sections
// that get one vector each, and guesses their language (German or English)
// for the full-text analyser.
//
// It knows nothing of Dgraph, embedders or MCP: text in, sections out.
package chunk

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/knowmind/knowmind/internal/runes"
)

// Sizes in characters (runes), the unit the spec counts content in.
//
// A section of at most Target characters stays one chunk. Longer sections
// are packed paragraph by paragraph into chunks of at most Target; a single
// paragraph longer than Target is cut into windows of at most Target that
// overlap by Overlap characters, cut at a sentence end or, failing that, a
// space, so a sentence split by a cut is whole in at least one chunk.
//
// 1200 characters is about 200–300 tokens: well inside the 512-token window
// of e5/MiniLM models, and long enough to hold a complete statement.
const (
	DefaultTarget  = 1200
	DefaultOverlap = 150
)

// MaxChunkBytes bounds a chunk's text in bytes, whatever Options say and
// whatever the text (runs without spaces, CJK, combining characters, a text
// of headings only). Dgraph's full-text index stores every word of a chunk
// as a key, and a key over 65,000 bytes panics the alpha at commit; a word
// is at most its chunk, and Dgraph's lowercasing and NFKC can grow it at
// most elevenfold, so 4,800 bytes (1,200 runes of 4 bytes) keeps every key
// under that limit (graph/guard.go checks the same bound on every write).
const MaxChunkBytes = 4800

// Heading bounds, in characters. Every chunk of a section carries its heading
// path, so an unbounded heading would be stored once per chunk: one heading of
// 20,000 characters over 500 short sections made 20 MB of chunks from 24 KB of
// input. Cut, a heading still says where a chunk belongs.
const (
	MaxHeadingChars     = 100 // one level; longer ones end in "…"
	MaxHeadingPathChars = 300 // the whole path "H1 > H2 > …"; longer paths end in "…"
)

// Options tune Split; zero fields take the defaults.
type Options struct {
	Target  int // maximum characters of a chunk's body
	Overlap int // characters shared by consecutive windows of one long paragraph
}

// Chunk is one section of a text.
type Chunk struct {
	Position int    // 0-based order in the text
	Heading  string // Markdown heading path, "H1 > H2"; empty before the first heading; at most MaxHeadingPathChars
	Text     string // the section's body, without its heading line
}

// Split cuts text into chunks: Markdown headings (ATX "#"… "######",
// outside fenced code blocks) start a new section, then long sections are
// split at paragraphs (blank lines), then at the size limit with overlap.
// Sections with an empty body are skipped, unless the text has nothing but
// headings: then the whole text is one chunk. An empty text gives none.
func Split(text string, opt Options) []Chunk {
	if opt.Target <= 0 {
		opt.Target = DefaultTarget
	}
	if opt.Overlap <= 0 {
		opt.Overlap = DefaultOverlap
	}
	// A window is cut in its second half, so an overlap under a quarter of
	// the target always moves forward.
	opt.Overlap = min(opt.Overlap, opt.Target/4)
	text = strings.ReplaceAll(text, "\r\n", "\n")

	var out []Chunk
	for _, s := range sections(text) {
		for _, body := range splitSection(s.body, opt) {
			out = append(out, Chunk{Position: len(out), Heading: s.heading, Text: body})
		}
	}
	if len(out) == 0 {
		// Nothing but headings: the text itself is the body, split like any
		// other, so a heading of 70,000 characters still makes bounded chunks.
		for _, body := range splitSection(text, opt) {
			out = append(out, Chunk{Position: len(out), Text: body})
		}
	}
	return out
}

type section struct {
	heading string
	body    string
}

// sections splits at ATX headings, keeping the path of enclosing headings.
func sections(text string) []section {
	var (
		out   []section
		path  []string // path[i] is the heading of level i+1, "" where a level was skipped
		body  strings.Builder
		fence string // the open code fence ("```" or "~~~"), "" outside
	)
	flush := func() {
		out = append(out, section{heading: headingPath(path), body: body.String()})
		body.Reset()
	}
	for _, line := range strings.SplitAfter(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			body.WriteString(line)
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			body.WriteString(line)
			continue
		}
		if level, title, ok := atxHeading(line); ok {
			flush()
			for len(path) < level {
				path = append(path, "")
			}
			path = append(path[:level-1], runes.Truncate(title, MaxHeadingChars))
			continue
		}
		body.WriteString(line)
	}
	flush()
	return out
}

// atxHeading recognises "# Title", "## Title ##" (at most three spaces of
// indent, a space after the hashes); "#hashtag" is not a heading.
func atxHeading(line string) (level int, title string, ok bool) {
	line = strings.TrimRight(line, "\n")
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return 0, "", false
	}
	line = line[indent:]
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 {
		return 0, "", false
	}
	rest := line[level:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return 0, "", false
	}
	title = strings.TrimSpace(rest)
	// A closing sequence of hashes is decoration.
	if t := strings.TrimRight(title, "#"); t != title && (t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t")) {
		title = strings.TrimSpace(t)
	}
	return level, title, true
}

func headingPath(path []string) string {
	parts := make([]string, 0, len(path))
	for _, p := range path {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return runes.Truncate(strings.Join(parts, " > "), MaxHeadingPathChars)
}

// fits reports whether s may be one chunk: at most opt.Target runes and
// MaxChunkBytes bytes.
func fits(s string, opt Options) bool {
	return len(s) <= MaxChunkBytes && utf8.RuneCountInString(s) <= opt.Target
}

// splitSection packs paragraphs into chunks of at most opt.Target runes and
// MaxChunkBytes bytes.
func splitSection(body string, opt Options) []string {
	body = strings.TrimSpace(body)
	if body == "" {
		return nil
	}
	if fits(body, opt) {
		return []string{body}
	}
	var (
		out     []string
		cur     strings.Builder
		curLen  int
		flushed = func() {
			if curLen > 0 {
				out = append(out, cur.String())
				cur.Reset()
				curLen = 0
			}
		}
	)
	for _, para := range paragraphs(body) {
		n := utf8.RuneCountInString(para)
		if !fits(para, opt) {
			flushed()
			out = append(out, windows(para, opt)...)
			continue
		}
		if curLen > 0 && (curLen+2+n > opt.Target || cur.Len()+2+len(para) > MaxChunkBytes) {
			flushed()
		}
		if curLen > 0 {
			cur.WriteString("\n\n")
			curLen += 2
		}
		cur.WriteString(para)
		curLen += n
	}
	flushed()
	return out
}

// paragraphs splits at blank lines, dropping empty paragraphs.
func paragraphs(body string) []string {
	var out []string
	var cur []string
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "" {
			if len(cur) > 0 {
				out = append(out, strings.TrimSpace(strings.Join(cur, "\n")))
				cur = cur[:0]
			}
			continue
		}
		cur = append(cur, line)
	}
	if len(cur) > 0 {
		out = append(out, strings.TrimSpace(strings.Join(cur, "\n")))
	}
	return out
}

// windows cuts one long paragraph into overlapping pieces of at most
// opt.Target runes and MaxChunkBytes bytes.
func windows(para string, opt Options) []string {
	r := []rune(para)
	var out []string
	start := 0
	for start < len(r) {
		end, size := start, 0
		for end < len(r) && end-start < opt.Target && size+utf8.RuneLen(r[end]) <= MaxChunkBytes {
			size += utf8.RuneLen(r[end])
			end++
		}
		if end >= len(r) {
			out = append(out, strings.TrimSpace(string(r[start:])))
			break
		}
		end = cutPoint(r, start, end)
		out = append(out, strings.TrimSpace(string(r[start:end])))
		next := end - opt.Overlap
		// Start the next window at a word boundary inside the overlap.
		for next < end && next > start && !unicode.IsSpace(r[next-1]) {
			next++
		}
		if next <= start {
			next = end
		}
		start = next
	}
	return out
}

// cutPoint picks where a window ending at most at end stops: after the last
// sentence end in its second half, else at the last space there, else at end.
func cutPoint(r []rune, start, end int) int {
	half := start + (end-start)/2
	for i := end - 1; i > half; i-- {
		if unicode.IsSpace(r[i]) && isSentenceEnd(r[i-1]) {
			return i
		}
	}
	for i := end - 1; i > half; i-- {
		if unicode.IsSpace(r[i]) {
			return i
		}
	}
	return end
}

func isSentenceEnd(c rune) bool {
	return c == '.' || c == '!' || c == '?' || c == ':' || c == ';'
}
