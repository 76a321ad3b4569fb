package chunk

import (
	"strings"
	"unicode"
)

// Languages DetectLanguage returns. The graph stores German text with the
// language tag "de" (German stemmer) and English untagged.
const (
	German  = "de"
	English = "en"
)

// detectSample bounds the work for huge texts: the first part decides.
const detectSample = 20000

// Function words frequent in one language and rare in the other. Words
// both languages use ("in", "so", "die" is rare enough in English to stay)
// are left out.
var (
	germanWords = set("der", "die", "das", "und", "ist", "nicht", "ein", "eine", "einen", "mit",
		"für", "auf", "den", "dem", "des", "sich", "von", "zu", "im", "auch", "es", "wird",
		"werden", "bei", "oder", "als", "wir", "sie", "ich", "sind", "nach", "aus", "wie",
		"noch", "über", "zum", "zur", "vom", "hat", "haben", "kann", "muss", "dass", "wenn",
		"nur", "alle", "jährlich", "einer", "eines", "diese", "dieser", "ab", "bis", "mehr")
	englishWords = set("the", "and", "is", "are", "of", "to", "that", "with", "for", "on",
		"this", "it", "be", "as", "by", "from", "or", "not", "was", "have", "has", "will",
		"can", "must", "at", "which", "an", "all", "their", "they", "we", "you", "he", "she",
		"been", "were", "would", "should", "if", "when", "only", "more", "after", "about")
)

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// DetectLanguage guesses whether text is German or English by counting
// function words of each (umlauts and ß break a tie towards German). It is
// meant for picking a stemmer, not for linguistics; English is the default.
func DetectLanguage(text string) string {
	if len(text) > detectSample {
		text = text[:detectSample]
	}
	var de, en, umlauts int
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r)
	}) {
		if germanWords[w] {
			de++
		}
		if englishWords[w] {
			en++
		}
		if strings.ContainsAny(w, "äöüß") {
			umlauts++
		}
	}
	if de > en || de == en && umlauts > 0 {
		return German
	}
	return English
}
