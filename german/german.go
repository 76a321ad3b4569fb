// Package german holds the word rules recall needs for German beyond what a stemmer does:
// splitting compounds into the words they are made of (Reisekostenabrechnung → reise, kosten,
// abrechnung), the infinitive of a separable verb whose particle stands apart ("reicht … ein" →
// einreichen) or inside it (eingereicht, einzureichen), and umlauts written as ae/oe/ue.
//
// It works on lowercase words and asks a Lexicon which strings are words: the system's German
// word list (SystemWords) and, at query time, the tenant's own vocabulary. It knows nothing of
// tokenizers, stemmers or indexes (package bm25 applies it).
package german

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Lexicon tells whether a lowercase string is a word.
type Lexicon interface {
	Has(word string) bool
}

// Lexicons is a Lexicon that knows a word when any of its members does.
type Lexicons []Lexicon

// Has implements Lexicon.
func (ls Lexicons) Has(w string) bool {
	for _, l := range ls {
		if l != nil && l.Has(w) {
			return true
		}
	}
	return false
}

// Bounds of the compound split. A modifier (any part but the last) shorter than minModifier
// is not tried: three-letter words (rat, bau, tor, ...) split too many words that are not
// compounds (Rathaus is one, Tornado is not). maxWordRunes bounds the work per word (the split
// tries every pair of positions).
const (
	minModifier  = 4
	minHead      = 3
	minCompound  = minModifier + minHead
	maxWordRunes = 40
)

// linkers are the linking elements (Fugenelemente) that may stand between a compound's parts:
// Kündigung-s-frist, Tag-es-ordnung, Firma → Firmen-wagen (-n-, -en-), Kind-er-garten. The
// dropped e (Schule → Schul-buch) is handled by trying the modifier with an e added.
var linkers = []string{"s", "es", "n", "en", "er", "e"}

// Split returns the parts of the compound word (lowercase), or nil when it is not one the
// lexicon can explain: every part must be a word of lex (a modifier may also be a word less
// its final e, and may be followed by a linking element). Of the ways to split into two or
// more parts, the one with the fewest parts wins, then the one whose shortest part is longest;
// a part that is itself a compound is followed by its own parts (reisekostenabrechnung →
// reisekosten, reise, kosten, abrechnung). A word the lexicon holds as a whole is still split:
// word lists hold many compounds.
func Split(word string, lex Lexicon) []string {
	if lex == nil {
		return nil
	}
	n := utf8.RuneCountInString(word)
	if n < minCompound || n > maxWordRunes {
		return nil
	}
	// A feminine form is split as its masculine (Mitarbeiterinnen as Mitarbeiter, not
	// Mitarbeit-rinnen): -in and -innen are suffixes, not words of the compound.
	for _, suffix := range []string{"innen", "in"} {
		if base, ok := strings.CutSuffix(word, suffix); ok {
			if parts := Split(base, lex); parts != nil || lex.Has(base) {
				return parts
			}
		}
	}
	// Byte offsets of the rune boundaries, so that parts are cut at runes.
	at := make([]int, 0, n+1)
	for i := range word {
		at = append(at, i)
	}
	at = append(at, len(word))
	// best[i]: the best split of word[at[i]:] into parts (nil: none).
	type split struct {
		parts    []string
		shortest int
	}
	best := make([]*split, n+1)
	best[n] = &split{shortest: maxWordRunes + 1}
	better := func(a, b *split) bool {
		if b == nil {
			return true
		}
		if len(a.parts) != len(b.parts) {
			return len(a.parts) < len(b.parts)
		}
		return a.shortest > b.shortest
	}
	for i := n - minHead; i >= 0; i-- {
		var found *split
		for j := i + minHead; j <= n; j++ {
			part := word[at[i]:at[j]]
			runes := j - i
			if j == n {
				if i > 0 && runes >= minHead && lex.Has(part) && !suffixHeads[part] {
					s := &split{parts: []string{part}, shortest: runes}
					if better(s, found) {
						found = s
					}
				}
				continue
			}
			if runes < minModifier || !modifier(part, lex) {
				continue
			}
			// The rest, right after the part or after a linking element.
			try := func(k int) {
				if k > n || best[k] == nil || n-k < minHead {
					return
				}
				rest := best[k]
				s := &split{parts: append([]string{modifierWord(part, lex)}, rest.parts...), shortest: min(runes, rest.shortest)}
				if better(s, found) {
					found = s
				}
			}
			try(j)
			for _, l := range linkers {
				if strings.HasPrefix(word[at[j]:], l) {
					try(j + utf8.RuneCountInString(l))
				}
			}
		}
		best[i] = found
	}
	if best[0] == nil {
		return nil
	}
	// A part may itself be a compound the list holds as a word (reisekosten): its own parts
	// follow it.
	var out []string
	for _, p := range best[0].parts {
		out = append(out, p)
		out = append(out, Split(p, lex)...)
	}
	return out
}

// modifier tells whether part can stand as a compound's modifier: a word, or a word of at
// least minDroppedE letters less its final e (Schul-buch, Sprach-kurs; not Supp-ort).
func modifier(part string, lex Lexicon) bool {
	return lex.Has(part) || (utf8.RuneCountInString(part) >= minDroppedE && lex.Has(part+"e"))
}

// minDroppedE is the shortest modifier that may stand for a word less its final e.
const minDroppedE = 5

// suffixHeads are derivational suffixes a word list also holds as words (der Schaft): as the
// last part they make Meister-schaft of Meisterschaft.
var suffixHeads = map[string]bool{"schaft": true, "schaften": true, "heit": true, "keit": true, "nis": true, "tum": true}

// modifierWord is the word a modifier stands for.
func modifierWord(part string, lex Lexicon) string {
	if lex.Has(part) {
		return part
	}
	return part + "e"
}

// Particles are the separable verb prefixes that stand at the end of a clause when the verb is
// finite (ruft … an, reicht … ein, füllt … aus).
var Particles = map[string]bool{
	"ab": true, "an": true, "auf": true, "aus": true, "bei": true, "ein": true, "fest": true,
	"fort": true, "her": true, "hin": true, "los": true, "mit": true, "nach": true, "vor": true,
	"weg": true, "weiter": true, "zu": true, "zurück": true, "zusammen": true, "statt": true,
	"teil": true, "dar": true, "heim": true, "hoch": true, "um": true, "durch": true,
	"vorbei": true, "heraus": true, "hinaus": true, "herunter": true, "hinzu": true, "nieder": true,
}

// particlesLongestFirst is Particles in a fixed order, longest first (vorbei before vor).
var particlesLongestFirst = func() []string {
	ps := make([]string, 0, len(Particles))
	for p := range Particles {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b string) int {
		if d := len(b) - len(a); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	return ps
}()

// finiteEndings are the endings of a finite present or weak past verb form, longest first, that
// Infinitives strips before adding -en.
var finiteEndings = []string{"test", "ten", "tet", "est", "st", "te", "et", "en", "t", "e"}

// Infinitives guesses the infinitives of a finite verb form (reicht → reichen, meldet →
// melden, ändert → ändern), most likely first. Strong verbs that change their vowel (fängt,
// rief) are beyond it.
func Infinitives(form string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(w string) {
		if utf8.RuneCountInString(w) >= 4 && !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, e := range finiteEndings {
		if stem, ok := strings.CutSuffix(form, e); ok && utf8.RuneCountInString(stem) >= 2 {
			add(stem + "en")
			if strings.HasSuffix(stem, "er") || strings.HasSuffix(stem, "el") {
				add(stem + "n") // ändert → ändern, sammelt → sammeln
			}
		}
	}
	add(form + "en")
	return out
}

// Separable returns the infinitive of a separable verb written with its particle in one word
// as a participle or zu-infinitive (eingereicht → einreichen, einzureichen → einreichen,
// angerufen → anrufen), or "" when word is none: the particle and the rest must make a word of
// lex (with no lexicon, the first guess stands when the rest is long enough to be a verb).
func Separable(word string, lex Lexicon) string {
	for _, p := range particlesLongestFirst {
		rest, ok := strings.CutPrefix(word, p)
		if !ok {
			continue
		}
		for _, infix := range []string{"ge", "zu"} {
			stem, ok := strings.CutPrefix(rest, infix)
			if !ok || utf8.RuneCountInString(stem) < 4 {
				continue
			}
			if infix == "zu" {
				// einzureichen: the rest is already the infinitive.
				if strings.HasSuffix(stem, "en") || strings.HasSuffix(stem, "ern") || strings.HasSuffix(stem, "eln") {
					if w := p + stem; lex == nil || lex.Has(w) {
						return w
					}
				}
				continue
			}
			// eingereicht, angerufen: a participle; strip its ending.
			for _, inf := range participleInfinitives(stem) {
				if w := p + inf; lex != nil && lex.Has(w) {
					return w
				}
			}
			if lex == nil {
				if infs := participleInfinitives(stem); len(infs) > 0 {
					return p + infs[0]
				}
			}
		}
	}
	return ""
}

// participleInfinitives guesses the infinitive behind a participle less its ge- (reicht →
// reichen, rufen → rufen, meldet → melden).
func participleInfinitives(stem string) []string {
	var out []string
	if strings.HasSuffix(stem, "en") {
		out = append(out, stem)
	}
	for _, e := range []string{"et", "t"} {
		if s, ok := strings.CutSuffix(stem, e); ok && utf8.RuneCountInString(s) >= 2 {
			out = append(out, s+"en")
			if strings.HasSuffix(s, "er") || strings.HasSuffix(s, "el") {
				out = append(out, s+"n")
			}
		}
	}
	return out
}

// Umlauts returns word with ae, oe and ue written as ä, ö and ü where that makes a word of lex
// (Gebuehren → gebühren, Kuendigung → kündigung), or "" when no such spelling is a word. A
// word with more than three such pairs is left alone (each pair doubles the spellings tried).
func Umlauts(word string, lex Lexicon) string {
	if lex == nil {
		return ""
	}
	var at []int
	for i := 0; i+1 < len(word); i++ {
		if word[i+1] == 'e' && (word[i] == 'a' || word[i] == 'o' || word[i] == 'u') {
			if word[i] == 'u' && i > 0 && word[i-1] == 'q' {
				continue // que: never an umlaut
			}
			at = append(at, i)
		}
	}
	if len(at) == 0 || len(at) > 3 {
		return ""
	}
	umlaut := map[byte]string{'a': "ä", 'o': "ö", 'u': "ü"}
	// Every choice of pairs to replace, all of them first.
	for mask := 1<<len(at) - 1; mask > 0; mask-- {
		var b strings.Builder
		prev := 0
		for k, i := range at {
			if mask&(1<<k) == 0 {
				continue
			}
			b.WriteString(word[prev:i])
			b.WriteString(umlaut[word[i]])
			prev = i + 2
		}
		b.WriteString(word[prev:])
		if w := b.String(); lex.Has(w) {
			return w
		}
	}
	return ""
}
