package extract

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// TestEntitySet measures Entities on testdata/entities.tsv: the share of
// sentences naming an entity in which one of the right type is found (hit
// rate), the expected entities found per type, and the share of entities
// found that the sentence does not name (false-entity rate).
func TestEntitySet(t *testing.T) {
	hit, falseRate := scoreEntities(t, "testdata/entities.tsv", 100)
	if hit < 0.9 || falseRate > 0.1 {
		t.Errorf("hit rate %.2f / false-entity rate %.2f: want at least 0.90 / at most 0.10", hit, falseRate)
	}
}

// TestEntitySetHeldOut scores the second set, written after the extractor.
func TestEntitySetHeldOut(t *testing.T) {
	hit, falseRate := scoreEntities(t, "testdata/entities-heldout.tsv", 30)
	if hit < 0.7 || falseRate > 0.25 {
		t.Errorf("hit rate %.2f / false-entity rate %.2f: want at least 0.70 / at most 0.25", hit, falseRate)
	}
}

func scoreEntities(t *testing.T, path string, minSentences int) (hitRate, falseRate float64) {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	types := []string{"person", "organisation", "project", "place"}
	var naming, hits, found, falseEnts, sentences int
	perType := map[string][2]int{} // expected, found
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || strings.TrimSpace(line) == "" {
			continue
		}
		text, want, _ := strings.Cut(line, "\t")
		sentences++
		got, _ := Entities(text, nil, types)
		var expected [][2]string
		for _, e := range strings.Split(want, "|") {
			if typ, name, ok := strings.Cut(e, ":"); ok {
				expected = append(expected, [2]string{typ, strings.ToLower(name)})
			}
		}
		matches := func(typ, name string) bool {
			name = strings.ToLower(name)
			for _, e := range expected {
				if e[0] == typ && (strings.Contains(name, e[1]) || strings.Contains(e[1], name)) {
					return true
				}
			}
			return false
		}
		hit := false
		for _, g := range got {
			found++
			if matches(g.Type, g.Name) {
				hit = true
			} else {
				falseEnts++
				t.Logf("false entity %s:%q in %q", g.Type, g.Name, text)
			}
		}
		for _, e := range expected {
			c := perType[e[0]]
			c[0]++
			for _, g := range got {
				if g.Type == e[0] && (strings.Contains(strings.ToLower(g.Name), e[1]) || strings.Contains(e[1], strings.ToLower(g.Name))) {
					c[1]++
					break
				}
			}
			perType[e[0]] = c
		}
		if len(expected) > 0 {
			naming++
			if hit {
				hits++
			} else {
				t.Logf("missed: %q (want %s, got %v)", text, want, got)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d sentences, %d name an entity\n", path, sentences, naming)
	fmt.Fprintf(&b, "hit rate (an entity of the right type found): %d/%d = %.2f\n", hits, naming, float64(hits)/float64(max(1, naming)))
	for _, typ := range types {
		c := perType[typ]
		fmt.Fprintf(&b, "  %-13s expected entities found %d/%d\n", typ, c[1], c[0])
	}
	fmt.Fprintf(&b, "false-entity rate (found, not named): %d/%d = %.2f\n", falseEnts, found, float64(falseEnts)/float64(max(1, found)))
	t.Log("\n" + b.String())
	if os.Getenv("KNOWMIND_EVAL_PRINT") != "" {
		os.Stdout.WriteString(b.String())
	}
	if sentences < minSentences {
		t.Fatalf("only %d sentences", sentences)
	}
	return float64(hits) / float64(max(1, naming)), float64(falseEnts) / float64(max(1, found))
}
