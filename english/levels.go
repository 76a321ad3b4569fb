// Package english holds what recall knows of the English language beyond the tenant's own text:
// how common a word is in general English (Levels), read from the SCOWL word lists Debian's
// `scowl` package installs. A tenant's statistics say how rare a word is in what the tenant
// wrote; they cannot say whether a word it never wrote is an everyday word or a question's
// subject, which is what these levels tell.
//
// It works on words and knows nothing of tokenizers, stemmers or indexes.
package english

import (
	"bufio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Levels maps a lowercase word to its SCOWL size level: the smallest list that holds it, 10
// for the commonest words ("sign", "head", "point") up to 95 for the rarest ones a large
// dictionary still holds. A word's level is its commonness rank, not a count: a lower level is
// a more common word. The zero value holds no word.
type Levels struct {
	level map[string]entry
}

// entry is a word's commonest level over every list, and over the lists that write it
// lowercase and capitalised (0: none does).
type entry struct {
	level, lower, capital uint8
}

// Level is w's level (w lowercase) and whether the lists hold it.
func (l *Levels) Level(w string) (int, bool) {
	if l == nil {
		return 0, false
	}
	e, ok := l.level[w]
	return int(e.level), ok
}

// Name tells whether the lists know w (lowercase) chiefly as a name: its commonest entry is
// capitalised ("John", "NASA", "Neptune"), not lowercase ("sign", "may", "will"). The first word
// of a sentence is capitalised whatever it is; this tells the name there.
func (l *Levels) Name(w string) bool {
	if l == nil {
		return false
	}
	e := l.level[w]
	return e.capital != 0 && (e.lower == 0 || e.capital < e.lower)
}

// Len is how many words the levels hold.
func (l *Levels) Len() int {
	if l == nil {
		return 0
	}
	return len(l.level)
}

// maxWord bounds the words kept: a longer line is no word a question is made of.
const maxWord = 40

// Add reads one word per line at level (1..255) from r: a word already held at a lower level
// keeps it. Words are lowercased; lines with spaces, digits or apostrophes (possessives,
// contractions) and lines longer than 40 characters or not UTF-8 are left out.
func (l *Levels) Add(r io.Reader, level int) error {
	if level < 1 || level > 255 {
		return nil
	}
	if l.level == nil {
		l.level = map[string]entry{}
	}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w := strings.TrimSpace(sc.Text())
		if w == "" || utf8.RuneCountInString(w) > maxWord || !utf8.ValidString(w) || strings.ContainsAny(w, " \t0123456789'’") {
			continue
		}
		first, _ := utf8.DecodeRuneInString(w)
		capital := unicode.IsUpper(first)
		w = strings.ToLower(w)
		e, ok := l.level[w]
		if !ok || int(e.level) > level {
			e.level = uint8(level)
		}
		if capital && (e.capital == 0 || int(e.capital) > level) {
			e.capital = uint8(level)
		}
		if !capital && (e.lower == 0 || int(e.lower) > level) {
			e.lower = uint8(level)
		}
		l.level[w] = e
	}
	return sc.Err()
}

// listKinds are the SCOWL lists read: the words of every spelling (English common to all,
// then the American, British, Canadian and Australian ones), capitalised words and proper
// names ("Neptune", "Westphalia"), and abbreviations. Variant spellings, contractions, Roman
// numerals and hacker slang are left out.
var (
	listSpellings = []string{"english", "american", "british", "canadian", "australian"}
	listKinds     = []string{"words", "upper", "proper-names", "abbreviations"}
)

// MaxLevel is the rarest level SystemLevels reads. SCOWL's own scale puts general vocabulary at
// 70 and below ("large": what a big dictionary's spell checker accepts); its 80 and 95 add
// obscure words, among them foreign ones that are everyday words elsewhere (German "mache" at
// 80, "Strom" at 95). A word rarer than 70 has no level: what it means is not known here.
const MaxLevel = 70

// ReadDir reads the SCOWL lists in dir, files named <spelling>-<kind>.<level> (Debian's
// /usr/share/dict/scowl), up to level maxLevel. It returns no levels, and no error, when dir
// holds none.
func ReadDir(dir string, maxLevel int) (*Levels, error) {
	l := &Levels{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		if os.IsNotExist(err) {
			return l, nil
		}
		return nil, err
	}
	for _, e := range entries {
		level, ok := listLevel(e)
		if !ok || level > maxLevel {
			continue
		}
		f, err := os.Open(filepath.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		err = l.Add(f, level)
		f.Close()
		if err != nil {
			return nil, err
		}
	}
	return l, nil
}

// listLevel is the level of a SCOWL list file read by ReadDir; ok false for other files.
func listLevel(e fs.DirEntry) (int, bool) {
	if e.IsDir() {
		return 0, false
	}
	name, suffix, found := strings.Cut(e.Name(), ".")
	if !found {
		return 0, false
	}
	level, err := strconv.Atoi(suffix)
	if err != nil || level < 1 || level > 255 {
		return 0, false
	}
	spelling, kind, _ := strings.Cut(name, "-")
	for _, s := range listSpellings {
		for _, k := range listKinds {
			if spelling == s && kind == k {
				return level, true
			}
		}
	}
	return 0, false
}

// SystemDir is where Debian's scowl package installs its lists.
const SystemDir = "/usr/share/dict/scowl"

// SystemLevels reads the lists of SystemDir up to MaxLevel once per process; empty levels when
// the package is not installed (the rules that need them are then off). The lists are the
// package's data, read where the package put them, not shipped with knowmind.
var SystemLevels = sync.OnceValue(func() *Levels {
	l, err := ReadDir(SystemDir, MaxLevel)
	if err != nil {
		return &Levels{}
	}
	return l
})
