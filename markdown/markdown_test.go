package markdown

import (
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

const note = `# Kundenakte Müller

Intro mit [[Rahmenvertrag]] und [[Ansprechpartner|Herr Berger]].

## Termine

- 12. März Workshop

## Offene Punkte

Angebot prüfen.

` + "```" + `
## not a heading [[Not a link]]
` + "```" + `
`

func TestSplitFrontmatterAndTitle(t *testing.T) {
	fm, body, err := Split("---\ntype: kunde\ntags: [a, b]\nowner: anna\n---\n# Titel\n\nText")
	if err != nil || fm["type"] != "kunde" || fm["owner"] != "anna" || Title(body) != "Titel" {
		t.Fatalf("fm %v body %q err %v", fm, body, err)
	}
	if fm, body, _ := Split("# Nur Titel\n---\nrule"); fm != nil || Title(body) != "Nur Titel" {
		t.Fatalf("no frontmatter: %v %q", fm, body)
	}
	if _, _, err := Split("---\n: [broken\n---\n# T"); knowmind.AsError(err) == nil || knowmind.AsError(err).Param != "body" {
		t.Fatalf("broken YAML: %v", err)
	}
	if Title("Text first\n# Later") != "" || Title("\n\n#  Spaced title  #\n") != "Spaced title" {
		t.Fatal("title must be the leading H1 only")
	}
}

func TestOutlineAndWikiLinksSkipCode(t *testing.T) {
	var got []string
	for _, h := range Outline(note) {
		got = append(got, strings.Repeat("#", h.Level)+" "+h.Text)
	}
	if !slices.Equal(got, []string{"# Kundenakte Müller", "## Termine", "## Offene Punkte"}) {
		t.Fatalf("outline %v", got)
	}
	if l := WikiLinks(note + "\n[[rahmenvertrag]] [[Plan#Ziele]]"); !slices.Equal(l, []string{"Rahmenvertrag", "Ansprechpartner", "Plan"}) {
		t.Fatalf("links %v", l)
	}
}

func TestEditOperations(t *testing.T) {
	cases := []struct {
		name, op, content, heading, find string
		want                             []string // substrings of the result, in order
		not                              string
		errParam                         string
	}{
		{name: "append", op: "append", content: "Neu am Ende.", want: []string{"Angebot prüfen.", "Neu am Ende.\n"}},
		{name: "prepend keeps the title first", op: "prepend", content: "Zusammenfassung.", want: []string{"# Kundenakte Müller\n\nZusammenfassung.\n\nIntro"}},
		{name: "replace", op: "replace", content: "# Neu\n\nGanz neu.", want: []string{"# Neu"}, not: "Termine"},
		{name: "replaceSection", op: "replaceSection", heading: "## termine", content: "- 20. April Audit", want: []string{"## Termine\n\n- 20. April Audit\n\n## Offene Punkte"}, not: "12. März"},
		{name: "replaceSection last", op: "replaceSection", heading: "Offene Punkte", content: "Erledigt.", want: []string{"## Offene Punkte\n\nErledigt."}, not: "Angebot prüfen"},
		{name: "findReplace", op: "findReplace", find: "Angebot prüfen.", content: "Angebot angenommen.", want: []string{"Angebot angenommen."}},
		{name: "findReplace delete", op: "findReplace", find: "- 12. März Workshop\n", want: []string{"## Termine\n\n\n## Offene"}},
		{name: "not found", op: "findReplace", find: "gibt es nicht", content: "x", errParam: "find"},
		{name: "not unique", op: "findReplace", find: "##", content: "x", errParam: "find"},
		{name: "no section", op: "replaceSection", heading: "Fehlt", content: "x", errParam: "heading"},
		{name: "empty append", op: "append", errParam: "content"},
		{name: "unknown op", op: "insertAt", content: "x", errParam: "op"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Edit(note, c.op, c.content, c.heading, c.find)
			if c.errParam != "" {
				if e := knowmind.AsError(err); e == nil || e.Code != knowmind.EINVALID || e.Param != c.errParam {
					t.Fatalf("err = %v, want invalid %s", err, c.errParam)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			at := 0
			for _, w := range c.want {
				i := strings.Index(got[at:], w)
				if i < 0 {
					t.Fatalf("result lacks %q (in order):\n%s", w, got)
				}
				at += i + len(w)
			}
			if c.not != "" && strings.Contains(got, c.not) {
				t.Fatalf("result still has %q:\n%s", c.not, got)
			}
		})
	}
}

func TestRewriteWikiLinks(t *testing.T) {
	body := "# Plan\n\nSiehe [[Alter Titel]], [[alter titel#Kosten|die Kosten]] und [[Anderes]].\n\n```\n[[Alter Titel]]\n```"
	got, n := RewriteWikiLinks(body, "Alter Titel", "Neuer Titel")
	want := "# Plan\n\nSiehe [[Neuer Titel]], [[Neuer Titel#Kosten|die Kosten]] und [[Anderes]].\n\n```\n[[Alter Titel]]\n```"
	if got != want || n != 2 {
		t.Fatalf("rewrote %d:\n%s", n, got)
	}
	if got := SetTitle("\n# Alt\n\nText # Alt", "Neu"); got != "\n# Neu\n\nText # Alt" {
		t.Fatalf("SetTitle: %q", got)
	}
}
