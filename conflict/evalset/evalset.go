// Package evalset reads the conflict evaluation set (conflict/testdata/eval.tsv)
// and prints its score table: recall per kind of contradiction and false
// findings per kind of compatible pair, per language, and precision and recall
// overall. The comparator's test (conflict) and the benchmark through the
// service (make bench-conflicts) share it, so both print the same table.
package evalset

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// Pair is one line of the set.
type Pair struct {
	Kind string // place, role, date, amount, obligation, negation, status, none-compatible, none-unrelated
	Lang string // de, en
	Old  string
	New  string
}

// Conflict reports whether the pair is a contradiction.
func (p Pair) Conflict() bool { return !strings.HasPrefix(p.Kind, "none") }

// Load reads a set file: tab-separated kind, language, old fact, new fact; # starts a comment.
func Load(path string) ([]Pair, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Pair
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 4 {
			return nil, fmt.Errorf("%s:%d: want 4 tab-separated columns, got %d", path, n, len(cols))
		}
		out = append(out, Pair{Kind: cols[0], Lang: cols[1], Old: cols[2], New: cols[3]})
	}
	return out, sc.Err()
}

// Score counts the findings of one run over a set.
type Score struct {
	cells map[[2]string]*[2]int // (kind, lang) -> pairs, found
}

// Add records whether a conflict was found for p.
func (s *Score) Add(p Pair, found bool) {
	if s.cells == nil {
		s.cells = map[[2]string]*[2]int{}
	}
	c := s.cells[[2]string{p.Kind, p.Lang}]
	if c == nil {
		c = &[2]int{}
		s.cells[[2]string{p.Kind, p.Lang}] = c
	}
	c[0]++
	if found {
		c[1]++
	}
}

// PrecisionRecall over the pairs of lang ("" for all).
func (s *Score) PrecisionRecall(lang string) (precision, recall float64) {
	var tp, fp, pos int
	for k, c := range s.cells {
		if lang != "" && k[1] != lang {
			continue
		}
		if (Pair{Kind: k[0]}).Conflict() {
			tp += c[1]
			pos += c[0]
		} else {
			fp += c[1]
		}
	}
	return ratio(tp, tp+fp), ratio(tp, pos)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Write prints the table: per kind and language the pairs and the pairs with a
// finding (for a contradiction its recall, for a none kind its false findings),
// then precision and recall per language and overall.
func (s *Score) Write(w io.Writer, title string) {
	var kinds []string
	for k := range s.cells {
		if !slices.Contains(kinds, k[0]) {
			kinds = append(kinds, k[0])
		}
	}
	slices.SortFunc(kinds, func(a, b string) int {
		na, nb := strings.HasPrefix(a, "none"), strings.HasPrefix(b, "none")
		if na != nb {
			if na {
				return 1
			}
			return -1
		}
		return strings.Compare(a, b)
	})
	fmt.Fprintf(w, "%s\n%-16s %12s %12s %12s\n", title, "kind", "de", "en", "both")
	for _, k := range kinds {
		fmt.Fprintf(w, "%-16s", k)
		var all [2]int
		for _, lang := range []string{"de", "en"} {
			c := s.cells[[2]string{k, lang}]
			if c == nil {
				fmt.Fprintf(w, " %12s", "-")
				continue
			}
			all[0] += c[0]
			all[1] += c[1]
			fmt.Fprintf(w, " %12s", fmt.Sprintf("%d/%d", c[1], c[0]))
		}
		fmt.Fprintf(w, " %12s\n", fmt.Sprintf("%d/%d", all[1], all[0]))
	}
	for _, lang := range []string{"de", "en", ""} {
		p, r := s.PrecisionRecall(lang)
		name := lang
		if name == "" {
			name = "both"
		}
		fmt.Fprintf(w, "%-4s precision %.2f recall %.2f\n", name, p, r)
	}
}
