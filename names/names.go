// Package names holds the small word lists the rules read: common given
// names, places (cities, regions, countries) and the legal forms of
// organisations. The lists are hand-compiled for German and English business
// text (given.txt, places.txt); a tenant's own entities grow beyond them
// (extract.Entities takes the known entities).
//
// It knows nothing of Dgraph or MCP.
package names

import (
	_ "embed"
	"strings"
)

var (
	//go:embed given.txt
	givenText string
	//go:embed places.txt
	placesText string

	given  = wordSet(givenText)
	places = wordSet(placesText)
)

func wordSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, w := range strings.Fields(line) {
			out[w] = true
		}
	}
	return out
}

// Given reports whether w (any case) is a common given name.
func Given(w string) bool { return given[strings.ToLower(w)] }

// Place reports whether w (any case) is a known place.
func Place(w string) bool { return places[strings.ToLower(w)] }

// legalForms are the suffixes of organisation names, lower case without dots.
var legalForms = map[string]bool{
	"gmbh": true, "ag": true, "se": true, "kg": true, "ug": true, "ohg": true, "ev": true, "gbr": true, "kgaa": true,
	"inc": true, "ltd": true, "llc": true, "corp": true, "plc": true, "co": true, "bv": true, "sa": true, "sarl": true,
}

// LegalForm reports whether w (any case, dots ignored) is a legal form such as GmbH, AG or Ltd.
func LegalForm(w string) bool {
	return legalForms[strings.ReplaceAll(strings.ToLower(w), ".", "")]
}

// Honorifics precede a person's surname.
var honorifics = map[string]bool{
	"herr": true, "herrn": true, "frau": true, "mr": true, "mrs": true, "ms": true, "dr": true, "prof": true,
}

// Honorific reports whether w (any case, a trailing dot ignored) is a form of address (Herr, Frau, Mr, Dr).
func Honorific(w string) bool { return honorifics[strings.TrimSuffix(strings.ToLower(w), ".")] }
