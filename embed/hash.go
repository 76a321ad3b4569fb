package embed

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// hashVersion is part of the ID: bump it whenever a change here changes
// any vector, so stored vectors are never compared with different ones.
const hashVersion = 1

const (
	maxWordRunes  = 64      // longer "words" (hashes, base64) are cut: their tail carries no meaning
	maxUniqueWord = 1 << 16 // beyond this many distinct words, words are counted once each to bound memory
	stopWeight    = 0.25    // function words still count, a little
	ngramMin      = 3
	ngramMax      = 5
)

// Hash is the built-in offline embedder: feature hashing of words and
// character n-grams. It is lexical, not semantic (see the package doc).
//
// For each distinct word (lowercased Unicode letters/digits, umlauts folded
// ä→ae, ö→oe, ü→ue, ß→ss, accents dropped) with count c it adds, with weight
// (1+ln c):
//   - its stem (one common German/English inflection suffix removed, then
//     ae/oe/ue reduced to a/o/u so "Müller", "Mueller" and "Muller" meet) with weight 1,
//   - its character 3–5-grams (word padded with spaces) sharing weight 1,
//
// each to slot h mod Dim with sign from h (signed hashing keeps collisions
// unbiased), function words at a quarter weight. The sum is L2-normalised.
// Text without any letter or digit maps to one fixed unit vector.
type Hash struct {
	dim     int
	id      string
	scratch sync.Pool
}

// NewHash returns the hash embedder with dim dimensions (0: DefaultHashDim).
func NewHash(dim int) (*Hash, error) {
	if dim == 0 {
		dim = DefaultHashDim
	}
	if dim < 16 || dim > 65536 {
		return nil, fmt.Errorf("embed: hash dimension %d out of range 16..65536", dim)
	}
	h := &Hash{dim: dim, id: fmt.Sprintf("hash-v%d-%d", hashVersion, dim)}
	h.scratch.New = func() any { return newHashScratch() }
	return h, nil
}

func (h *Hash) ID() string       { return h.id }
func (h *Hash) Provider() string { return "knowmind-hash" }
func (h *Hash) Dim() int         { return h.dim }
func (h *Hash) Close() error     { return nil }

// Recomputable reports that the hash embedder's vectors are cheap and deterministic: the vector
// of a text is computed again rather than read back from the store (graph.RecomputableEmbedder).
func (h *Hash) Recomputable() bool { return true }

// EmbedPassages embeds each text; passages and queries are treated alike.
func (h *Hash) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		out[i] = h.embed(t)
	}
	return out, nil
}

// EmbedQuery embeds one query exactly like a passage.
func (h *Hash) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return h.embed(text), nil
}

// hashScratch is per-call working memory, pooled so that embedding many
// short texts does not allocate a map each time.
type hashScratch struct {
	index  map[string]int // word → position in words
	words  []string       // distinct words in first-seen order (order keeps float sums deterministic)
	count  []int
	word   []byte // the word being read, folded
	pad    []byte // " word " for n-grams
	starts []int  // rune offsets in pad
	stem   []byte // stem of the current word
	acc    []float64
	// sawWord is set once any word was read, also one that overflowed.
	sawWord bool
}

func newHashScratch() *hashScratch {
	return &hashScratch{index: map[string]int{}}
}

func (h *Hash) embed(text string) []float32 {
	s := h.scratch.Get().(*hashScratch)
	if cap(s.acc) < h.dim {
		s.acc = make([]float64, h.dim)
	}
	acc := s.acc[:h.dim]
	clear(acc)

	s.readWords(text, func(word []byte) { h.addWord(acc, s, word, 1) })
	for i, w := range s.words {
		s.word = append(s.word[:0], w...)
		h.addWord(acc, s, s.word, 1+math.Log(float64(s.count[i])))
	}
	if !s.sawWord {
		addFeature(acc, hashBytes(seedEmpty, nil), 1)
	}

	var sum float64
	for _, x := range acc {
		sum += x * x
	}
	if sum == 0 { // every feature cancelled out: practically impossible, but never return a zero vector
		addFeature(acc, hashBytes(seedEmpty, nil), 1)
		sum = 1
	}
	inv := 1 / math.Sqrt(sum)
	out := make([]float32, h.dim)
	for i, x := range acc {
		out[i] = float32(x * inv)
	}
	s.release(h)
	return out
}

func (s *hashScratch) release(h *Hash) {
	if len(s.words) > 4096 { // let a huge text's map go rather than keep it pooled
		return
	}
	clear(s.index)
	s.words, s.count = s.words[:0], s.count[:0]
	s.sawWord = false
	h.scratch.Put(s)
}

// readWords splits text into folded words and counts distinct ones; once
// maxUniqueWord distinct words are known, further new words go straight to
// overflow with tf 1 so memory stays bounded on adversarial input.
func (s *hashScratch) readWords(text string, overflow func(word []byte)) {
	s.word = s.word[:0]
	runes := 0
	flush := func() {
		if len(s.word) == 0 {
			return
		}
		s.sawWord = true
		if i, ok := s.index[string(s.word)]; ok { // no allocation for lookups
			s.count[i]++
		} else if len(s.words) < maxUniqueWord {
			w := string(s.word)
			s.index[w] = len(s.words)
			s.words = append(s.words, w)
			s.count = append(s.count, 1)
		} else {
			overflow(s.word)
		}
		s.word = s.word[:0]
		runes = 0
	}
	for _, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			continue
		}
		if runes >= maxWordRunes {
			continue
		}
		before := len(s.word)
		s.word = appendFolded(s.word, unicode.ToLower(r))
		runes += utf8.RuneCount(s.word[before:])
	}
	flush()
}

// addWord adds one word's stem and character n-grams with weight w.
func (h *Hash) addWord(acc []float64, s *hashScratch, word []byte, w float64) {
	if stopWords[string(word)] {
		w *= stopWeight
	}
	s.stem = unfoldUmlauts(append(s.stem[:0], stem(word)...))
	addFeature(acc, hashBytes(seedWord, s.stem), w)

	s.pad = append(append(append(s.pad[:0], ' '), word...), ' ')
	// Rune start offsets: n-grams count runes, not bytes, so "ä"-free words
	// and others get comparable grams.
	starts := s.starts[:0]
	for i := range string(s.pad) {
		starts = append(starts, i)
	}
	n := len(starts)
	starts = append(starts, len(s.pad))
	s.starts = starts
	grams := 0
	for size := ngramMin; size <= ngramMax; size++ {
		if n >= size {
			grams += n - size + 1
		}
	}
	if grams == 0 {
		return
	}
	gw := w / math.Sqrt(float64(grams))
	for size := ngramMin; size <= ngramMax; size++ {
		for i := 0; i+size <= n; i++ {
			addFeature(acc, hashBytes(seedGram, s.pad[starts[i]:starts[i+size]]), gw)
		}
	}
}

// Seeds keep a word and an n-gram with the same bytes apart.
const (
	seedWord  = 0x9e3779b97f4a7c15
	seedGram  = 0xc2b2ae3d27d4eb4f
	seedEmpty = 0x165667b19e3779f9
)

// hashBytes is FNV-1a 64 from a seeded basis, finished with splitmix64's
// mixer because FNV's low bits (used for the slot) mix poorly.
func hashBytes(seed uint64, b []byte) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}

func addFeature(acc []float64, h uint64, w float64) {
	slot := h % uint64(len(acc))
	if h>>63 == 1 {
		w = -w
	}
	acc[slot] += w
}

// appendFolded appends r (already lowercase) with German umlauts spelled
// out, so "Müller" and "Mueller" are the same word, and other Latin accents
// dropped ("café" = "cafe").
func appendFolded(b []byte, r rune) []byte {
	switch r {
	case 'ä':
		return append(b, 'a', 'e')
	case 'ö':
		return append(b, 'o', 'e')
	case 'ü':
		return append(b, 'u', 'e')
	case 'ß':
		return append(b, 's', 's')
	}
	if r >= 0xC0 && r <= 0x17F {
		if f, ok := latinFold[r]; ok {
			return append(b, f)
		}
	}
	return utf8.AppendRune(b, r)
}

var latinFold = func() map[rune]byte {
	m := map[rune]byte{}
	for base, accented := range map[byte]string{
		'a': "àáâãåāăą", 'c': "çćĉċč", 'd': "ďđ", 'e': "èéêëēĕėęě", 'g': "ĝğġģ",
		'h': "ĥħ", 'i': "ìíîïĩīĭįı", 'j': "ĵ", 'k': "ķ", 'l': "ĺļľŀł", 'n': "ñńņňŉ",
		'o': "òóôõøōŏő", 'r': "ŕŗř", 's': "śŝşš", 't': "ţťŧ", 'u': "ùúûũūŭůűų",
		'w': "ŵ", 'y': "ýÿŷ", 'z': "źżž",
	} {
		for _, r := range accented {
			m[r] = base
		}
	}
	return m
}()

// stemSuffixes are tried longest first; one is removed if at least three
// characters remain. It is deliberately crude: both sides of a comparison
// are stemmed alike, so over-stemming only merges rare word pairs, and the
// n-grams still tell them apart.
var stemSuffixes = []struct{ suffix, replace string }{
	{"ungen", "ung"}, {"heiten", "heit"}, {"keiten", "keit"}, {"innen", "in"},
	{"ies", "y"}, {"ied", "y"}, {"ing", ""}, {"ern", ""},
	{"en", ""}, {"er", ""}, {"es", ""}, {"em", ""}, {"ed", ""}, {"et", ""},
	{"e", ""}, {"s", ""},
}

func stem(word []byte) []byte {
	for _, c := range word {
		if c >= '0' && c <= '9' {
			return word
		}
	}
	for _, sfx := range stemSuffixes {
		s, ok := trimSuffix(word, sfx.suffix)
		if !ok || utf8.RuneCount(s)+len(sfx.replace) < 3 {
			continue
		}
		if sfx.suffix == "s" && len(s) > 0 && (s[len(s)-1] == 's' || s[len(s)-1] == 'u' || s[len(s)-1] == 'i') {
			return word // business, status, analysis: the s is no plural
		}
		if (sfx.suffix == "ing" || sfx.suffix == "ed") && len(s) >= 4 && s[len(s)-1] == s[len(s)-2] && !isVowel(s[len(s)-1]) && s[len(s)-1] != 's' && s[len(s)-1] != 'l' {
			return s[:len(s)-1] // planned, planning → plan
		}
		if sfx.replace == "" {
			return s
		}
		return append(append([]byte(nil), s...), sfx.replace...)
	}
	return word
}

// unfoldUmlauts drops the e of ae/oe/ue in a stem, so the stem also
// matches where the umlaut was written without dots ("Muller") and where an
// umlaut marks the plural ("Plätze" → "platz" = "Platz"). Only the stem
// feature is unfolded; the n-grams keep the spelled-out form.
func unfoldUmlauts(b []byte) []byte {
	out := b[:0]
	for i := 0; i < len(b); i++ {
		out = append(out, b[i])
		if (b[i] == 'a' || b[i] == 'o' || b[i] == 'u') && i+1 < len(b) && b[i+1] == 'e' {
			i++
		}
	}
	return out
}

func isVowel(c byte) bool { return strings.IndexByte("aeiouy", c) >= 0 }

func trimSuffix(b []byte, suffix string) ([]byte, bool) {
	if len(b) < len(suffix) || string(b[len(b)-len(suffix):]) != suffix {
		return b, false
	}
	return b[:len(b)-len(suffix)], true
}

// stopWords are frequent German and English function words, in folded form.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{
		"der", "die", "das", "den", "dem", "des", "ein", "eine", "einer", "eines", "einem", "einen",
		"und", "oder", "aber", "fuer", "mit", "von", "vom", "zu", "zum", "zur", "im", "in", "am", "an",
		"auf", "aus", "bei", "ist", "sind", "war", "wird", "werden", "nicht", "auch", "als", "wie",
		"so", "es", "er", "sie", "wir", "ihr", "ich", "du", "man", "sich", "dass", "noch", "nur", "um",
		"the", "a", "an", "and", "or", "of", "to", "on", "at", "for", "with", "by", "from", "is",
		"are", "was", "were", "be", "been", "it", "its", "this", "that", "these", "those", "as",
		"not", "but", "into", "than", "then", "there", "their", "they", "we", "you", "he", "she", "i",
	} {
		m[w] = true
	}
	return m
}()
