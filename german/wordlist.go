package german

import (
	"bufio"
	"io"
	"os"
	"strings"
	"sync"
	"unicode/utf8"
)

// WordList is a set of lowercase words read from a word list. The zero value holds none.
type WordList struct {
	words map[string]struct{}
}

// Has implements Lexicon.
func (l *WordList) Has(w string) bool {
	if l == nil {
		return false
	}
	_, ok := l.words[w]
	return ok
}

// Len is how many words the list holds.
func (l *WordList) Len() int {
	if l == nil {
		return 0
	}
	return len(l.words)
}

// maxListWord bounds the words kept: longer lines are not words a compound is made of.
const maxListWord = 40

// ReadWordList reads one word per line, lowercased: a plain list (Debian's wngerman,
// /usr/share/dict/ngerman) or a hunspell .dic (its first line, a count, is skipped; the
// affix flags after "/" are cut off, so only the stems it lists are known). Words shorter
// than three letters, with digits or spaces, or not UTF-8 are left out.
func ReadWordList(r io.Reader) (*WordList, error) {
	l := &WordList{words: map[string]struct{}{}}
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		w, _, _ := strings.Cut(strings.TrimSpace(sc.Text()), "/")
		n := utf8.RuneCountInString(w)
		if n < minHead || n > maxListWord || !utf8.ValidString(w) || strings.ContainsAny(w, " \t0123456789.'") {
			continue
		}
		l.words[strings.ToLower(w)] = struct{}{}
	}
	return l, sc.Err()
}

// SystemWordPaths are where SystemWords looks for a German word list, in order: Debian's
// wngerman package (a plain list of 350,000 forms), then hunspell-de-de's dictionary (stems).
var SystemWordPaths = []string{
	"/usr/share/dict/ngerman",
	"/usr/share/dict/ogerman",
	"/usr/share/hunspell/de_DE.dic",
}

var (
	systemOnce  sync.Once
	systemWords *WordList
)

// SystemWords is the first German word list of SystemWordPaths that is installed, read once
// per process; an empty list when none is (compounds are then split against the tenant's own
// vocabulary only, at query time). The list is GPL data of the Debian package, read where the
// package put it, not shipped with knowmind.
func SystemWords() *WordList {
	systemOnce.Do(func() {
		systemWords = &WordList{}
		for _, p := range SystemWordPaths {
			f, err := os.Open(p)
			if err != nil {
				continue
			}
			l, err := ReadWordList(f)
			f.Close()
			if err == nil && l.Len() > 0 {
				systemWords = l
				return
			}
		}
	})
	return systemWords
}
