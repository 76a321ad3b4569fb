package handlers

import (
	"fmt"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

// unknownWordCorpus is an everyday business store in German and English: deliveries, customers,
// meetings, plans, the workshop.
var unknownWordCorpus = [][2]string{
	{"Lieferbedingungen", "Lieferungen an die Rampe in Bielefeld nur montags bis 14 Uhr, Anmeldung bei der Spedition."},
	{"Zahlungsziel", "Der Kunde Müller zahlt per Lastschrift innerhalb von 30 Tagen nach Rechnung."},
	{"Ersatzteile", "Ersatzteile für die Werkstatt bestellt der Einkauf beim Lieferanten Schmitz."},
	{"Treffen", "Treffen war am Montag."},
	{"Alpha Plan", "The alpha plan ships the first release to three pilot customers in March."},
	{"Urlaub", "Frau Keller ist vom 3. bis 14. August im Urlaub, Vertretung übernimmt Herr Braun."},
	{"Server", "The build server restarts every night at two; backups run before the restart."},
	{"Kantine", "Die Kantine hat freitags geschlossen, Mittagessen gibt es dann beim Bäcker gegenüber."},
	{"Onboarding", "New hires get a laptop, a badge and a mentor in their first week."},
	{"Preisliste", "Die neue Preisliste gilt ab Januar, Rabatte über zehn Prozent gibt nur der Vertrieb frei."},
	{"Meeting notes", "We agreed to move the weekly sync to Thursday and to keep it under thirty minutes."},
	{"Parkplatz", "Besucher parken auf dem Parkplatz hinter Halle 2, der Schlüssel liegt am Empfang."},
	{"Invoice", "Invoices above five thousand euros need a second signature from finance."},
	{"Wartung", "Die Druckmaschine wird jeden ersten Dienstag im Monat gewartet."},
	{"Support hours", "Customer support answers tickets on weekdays from eight to six."},
	{"Lager", "Das Lager in Gütersloh nimmt Paletten nur mit Lieferschein an."},
	{"Feedback", "Many pilot customers asked for a longer trial."},
}

// unknownWords: everyday dictionary words, German and English, that no memory or note above holds.
var unknownWords = []string{
	"Quasar", "Raumschiff", "Giraffe", "Vulkan", "Trompete", "Gletscher", "Schmetterling", "Kathedrale",
	"Pinguin", "Harfe", "Zebra", "Lavendel", "volcano", "penguin", "cathedral", "trumpet",
	"glacier", "butterfly", "saxophone", "astronaut", "Orchidee", "Tintenfisch", "lighthouse", "kangaroo",
	"Eichhörnchen", "Mondfinsternis", "Vogelscheuche", "Zauberer", "Drachen", "Nashorn", "Kastanie", "Teleskop",
	"Segelboot", "Wüste", "Koralle", "Bernstein", "meteor", "violin", "pyramid", "dolphin",
	"hurricane", "wizard", "tulip", "jellyfish", "canyon", "parrot", "avalanche", "nebula",
}

// TestRankedToolsAnswerEmptyForUnknownWords: a one-word question about something the workspace
// never mentions gets an empty answer from every ranked tool, and so does "How many …?" about
// it though a memory says "many" (a question word, not what is asked about). The offline embedder's cosine for
// a word it shares nothing with is noise (its character n-grams meet some of any text's), and
// alone it must not make a hit.
func TestRankedToolsAnswerEmptyForUnknownWords(t *testing.T) {
	c := newNotesClient(t)
	rc := &recallClient{t: t, url: c.url, read: c.read, write: c.write}
	var all strings.Builder
	for _, m := range unknownWordCorpus {
		rc.store(m[0], m[1])
		all.WriteString(strings.ToLower(m[0] + " " + m[1] + " "))
	}
	// Short memories too: the fewer words a text has, the more one colliding word weighs in
	// its vector.
	people := []string{"Anna", "Bernd", "Clara", "David", "Emma", "Felix", "Greta", "Hannes", "Ida", "Jonas"}
	things := []string{"Angebot", "Vertrag", "Reklamation", "Schulung", "Inventur", "report", "budget", "deadline", "contract", "audit"}
	days := []string{"Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Monday", "Tuesday", "Friday"}
	for i := range 60 {
		title := fmt.Sprintf("%s %d", things[i%len(things)], i)
		content := fmt.Sprintf("%s: %s am %s.", people[i%len(people)], things[(i*3+1)%len(things)], days[(i*7)%len(days)])
		rc.store(title, content)
		all.WriteString(strings.ToLower(title + " " + content + " "))
	}
	for _, body := range []string{
		"# Rampe\n\nDie Rampe in Bielefeld ist montags für Lieferungen reserviert.",
		"# Alpha Plan\n\nPilot customers: Müller, Schmitz and Keller. Release in March.",
		"# Wartungsplan\n\nDruckmaschine: erster Dienstag im Monat. Server: nachts um zwei.",
	} {
		c.create(map[string]any{"project": "main", "body": body})
		all.WriteString(strings.ToLower(body + " "))
	}
	for _, w := range unknownWords {
		if strings.Contains(all.String(), strings.ToLower(w)) {
			t.Fatalf("%q is in the corpus: the test needs words it does not hold", w)
		}
	}
	for tool, n := range rankedCounts(t, c.url, c.read, "Rampe") {
		if n == 0 {
			t.Errorf("a known word: %s answered nothing", tool)
		}
	}
	for _, w := range unknownWords {
		for tool, n := range rankedCounts(t, c.url, c.read, w) {
			if n != 0 {
				t.Errorf("%q: %s answered %d hits, want none", w, tool, n)
			}
		}
		if w == strings.ToLower(w) { // English: asked as "how many", whose "many" a memory holds
			q := "How many " + w + "s are there?"
			for tool, n := range rankedCounts(t, c.url, c.read, q) {
				if n != 0 {
					t.Errorf("%q: %s answered %d hits, want none", q, tool, n)
				}
			}
		}
		var recall knowmind.RecallResult
		structured(t, callTool(t, c.url, c.read, "knowmind_recall", map[string]any{"query": w}), &recall)
		for _, h := range recall.Hits {
			t.Logf("%q: %q %.3f", w, h.Title, h.Score)
		}
	}
}
