package conflict

import "testing"

// TestGrammarPhrasings: phrasings the evaluation sets do not hold, each a
// contradiction or not, read the same way.
func TestGrammarPhrasings(t *testing.T) {
	for _, tc := range []struct {
		old, new string
		want     bool
	}{
		{"Frank Heller ist Vertriebsleiter.", "Petra Lang ist die neue Vertriebsleiterin.", true},
		{"Frank Heller leitet den Vertrieb.", "Petra Lang ersetzt Frank Heller als Leiterin des Vertriebs.", true},
		{"Henry Ford is our contact at Bluewave.", "Lucy Hall replaces Henry Ford as our contact at Bluewave.", true},
		{"Frank Heller leitet den Vertrieb.", "Frank Heller leitet den Vertrieb und das Marketing.", false},
		{"Der Launch ist am 5. Mai.", "Verschiebung des Launches auf den 19. Mai.", true},
		{"The release is on June 2.", "The release slipped to June 16.", true},
		{"Die Firma Kranich sitzt in Bremen.", "Der Umzug der Firma Kranich nach Hamburg ist beschlossen.", true},
		{"Acme Corp is based in Boston.", "Acme Corp moved its headquarters to Chicago.", true},
		{"Für Besucher ist eine Anmeldung Pflicht.", "Die Pflicht zur Anmeldung für Besucher entfällt.", true},
		{"Der Jour fixe findet am Dienstag statt.", "Der Jour fixe entfällt.", true},
		{"Das Budget für Apollo beträgt 80.000 Euro.", "Das Budget für Apollo wurde um 10.000 Euro erhöht.", false},
		{"Das Budget für Apollo beträgt 80.000 Euro.", "Das Budget für Apollo wurde auf 90.000 Euro erhöht.", true},
		{"Die Miete beträgt 900 Euro im Monat.", "Die Miete beträgt 10.800 Euro im Jahr.", false},
	} {
		if got, reason := Contradicts(tc.new, tc.old); got != tc.want {
			t.Errorf("%q -> %q: got %v (%s), want %v", tc.old, tc.new, got, reason, tc.want)
		}
	}
}
