package english_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowmind/knowmind/english"
)

// writeLists writes SCOWL-style list files (name → lines) into a new folder.
func writeLists(t *testing.T, lists map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range lists {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A word is a name when its commonest entry is capitalised: John as a name is commoner than
// john the word; May the month is as common as may the verb.
func TestNameIsTheCommonestEntryCapitalised(t *testing.T) {
	dir := writeLists(t, map[string]string{
		"english-words.10":         "may\nsign\n",
		"english-words.40":         "john\n",
		"english-upper.10":         "John\nMay\n",
		"english-upper.40":         "Neptune\n",
		"english-abbreviations.20": "NASA\n",
		"american-proper-names.50": "Westphalia\n",
	})
	l, err := english.ReadDir(dir, 70)
	if err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string]bool{"john": true, "neptune": true, "nasa": true, "westphalia": true, "may": false, "sign": false, "absent": false} {
		if got := l.Name(word); got != want {
			t.Errorf("Name(%q) = %v, want %v", word, got, want)
		}
	}
	if got, _ := l.Level("john"); got != 10 {
		t.Errorf("Level(john) = %d, want 10", got)
	}
}

// A word takes the level of the commonest list that holds it, in any spelling's list, and
// capitalised words and proper names count as their lowercase form.
func TestReadDirTakesTheCommonestLevel(t *testing.T) {
	dir := writeLists(t, map[string]string{
		"english-words.10":         "moon\nsign\nhead\nmoon's\n",
		"english-words.35":         "enzyme\nmoon\n",
		"english-upper.40":         "Neptune\n",
		"american-words.20":        "color\n",
		"british-proper-names.50":  "Westphalia\n",
		"english-contractions.10":  "isn't\nfoo\n", // contractions are not read
		"variant_1-words.10":       "colour\n",     // nor variant spellings
		"english-words.80":         "mache\n",      // nor levels above the bound
		"english-words.readme":     "notalevel\n",  // nor a file without a level
		"english-abbreviations.55": "VLAN\nsome thing\nx2\n",
	})
	l, err := english.ReadDir(dir, 70)
	if err != nil {
		t.Fatal(err)
	}
	for word, want := range map[string]int{"moon": 10, "sign": 10, "enzyme": 35, "neptune": 40, "color": 20, "westphalia": 50, "vlan": 55} {
		if got, ok := l.Level(word); !ok || got != want {
			t.Errorf("Level(%q) = %d %v, want %d", word, got, ok, want)
		}
	}
	for _, word := range []string{"moon's", "isn't", "foo", "colour", "mache", "notalevel", "some thing", "x2", "Neptune"} {
		if got, ok := l.Level(word); ok {
			t.Errorf("Level(%q) = %d, want none", word, got)
		}
	}
	if l.Len() != 8 {
		t.Errorf("Len = %d, want 8", l.Len())
	}
	all, err := english.ReadDir(dir, 95)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := all.Level("mache"); !ok || got != 80 {
		t.Errorf("up to 95: Level(mache) = %d %v, want 80", got, ok)
	}
}

func TestReadDirWithoutTheLists(t *testing.T) {
	l, err := english.ReadDir(filepath.Join(t.TempDir(), "absent"), 70)
	if err != nil || l.Len() != 0 {
		t.Fatalf("absent folder: %d words, %v; want none and no error", l.Len(), err)
	}
	var none *english.Levels
	if _, ok := none.Level("moon"); ok || none.Len() != 0 {
		t.Fatal("nil levels hold a word")
	}
}

// Add bounds what it keeps: an overlong line is no word.
func TestAddBoundsTheWords(t *testing.T) {
	var l english.Levels
	if err := l.Add(strings.NewReader(strings.Repeat("a", 41)+"\nok\n"), 10); err != nil {
		t.Fatal(err)
	}
	if l.Len() != 1 {
		t.Fatalf("Len = %d, want only the short word", l.Len())
	}
}

// The installed lists (Debian's scowl), where there are: everyday words sit below the words a
// question is about.
func TestSystemLevels(t *testing.T) {
	l := english.SystemLevels()
	if l.Len() == 0 {
		t.Skip("no SCOWL lists at " + english.SystemDir + " (apt-get install scowl)")
	}
	moon, ok1 := l.Level("moon")
	neptune, ok2 := l.Level("neptune")
	sign, ok3 := l.Level("sign")
	westphalia, ok4 := l.Level("westphalia")
	if !ok1 || !ok2 || !ok3 || !ok4 || moon >= neptune || sign >= westphalia {
		t.Errorf("moon %d %v, Neptune %d %v, sign %d %v, Westphalia %d %v: want the everyday words more common",
			moon, ok1, neptune, ok2, sign, ok3, westphalia, ok4)
	}
	for word, want := range map[string]bool{"john": true, "neptune": true, "sign": false, "may": false} {
		if l.Name(word) != want {
			t.Errorf("Name(%q) = %v, want %v", word, !want, want)
		}
	}
	if _, ok := l.Level("urlaubstage"); ok {
		t.Error("a German word has an English level")
	}
}
