// Package markdown holds the rules of a note's text: frontmatter, the title from the leading
// "# H1", the outline, wiki links ([[Title]], [[Title|label]]) and knowmind_edit_note's
// operations, which address text by words (headings, snippets), never by positions.
//
// It knows nothing of Dgraph or MCP: text in, text out. Errors are knowmind errors naming the
// tool parameter at fault.
package markdown

import (
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/internal/runes"
)

// Split separates a leading YAML frontmatter block ("---" line, YAML, "---" line) from the
// body. No frontmatter: nil and the text. Malformed YAML is an invalid body.
func Split(text string) (map[string]any, string, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	if !strings.HasPrefix(text, "---\n") {
		return nil, text, nil
	}
	rest := text[4:]
	end := strings.Index(rest, "\n---")
	if end < 0 || (len(rest) > end+4 && rest[end+4] != '\n') {
		return nil, text, nil // no closing line: not frontmatter, just a rule
	}
	raw, body := rest[:end], strings.TrimPrefix(rest[end+4:], "\n")
	fm := map[string]any{}
	if strings.TrimSpace(raw) != "" {
		if err := yaml.Unmarshal([]byte(raw), &fm); err != nil {
			return nil, "", knowmind.InvalidParam("body", "body: the frontmatter is not valid YAML")
		}
	}
	return fm, body, nil
}

// Title is the text of the body's leading "# H1" (blank lines before it allowed), or "".
func Title(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if level, text, ok := atx(line); ok && level == 1 {
			return text
		}
		return ""
	}
	return ""
}

// Outline lists the body's ATX headings outside code fences.
func Outline(body string) []knowmind.Heading {
	out := []knowmind.Heading{}
	fenced := false
	for _, line := range strings.Split(body, "\n") {
		if isFence(line) {
			fenced = !fenced
			continue
		}
		if level, text, ok := atx(line); ok && !fenced {
			out = append(out, knowmind.Heading{Level: level, Text: text})
		}
	}
	return out
}

func isFence(line string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")
}

// atx parses an ATX heading line ("## Text ##").
func atx(line string) (int, string, bool) {
	t := strings.TrimRight(line, " \t")
	if len(line)-len(strings.TrimLeft(line, " ")) > 3 {
		return 0, "", false
	}
	t = strings.TrimLeft(t, " ")
	level := 0
	for level < len(t) && t[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(t) && t[level] != ' ' && t[level] != '\t') {
		return 0, "", false
	}
	text := strings.TrimSpace(strings.TrimRight(strings.TrimSpace(t[level:]), "#"))
	return level, text, text != ""
}

var wikiLink = regexp.MustCompile(`\[\[([^\[\]\n|]+)(?:\|[^\[\]\n]*)?\]\]`)

// WikiLinks returns the distinct targets of [[Title]] and [[Title|label]] links outside code
// fences, in order of appearance. A "#section" suffix is dropped (the link is to the note).
func WikiLinks(body string) []string {
	var out []string
	seen := map[string]bool{}
	fenced := false
	for _, line := range strings.Split(body, "\n") {
		if isFence(line) {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range wikiLink.FindAllStringSubmatch(line, -1) {
			target, _, _ := strings.Cut(m[1], "#")
			target = strings.TrimSpace(target)
			key := strings.ToLower(target)
			if target == "" || seen[key] {
				continue
			}
			seen[key] = true
			out = append(out, target)
		}
	}
	return out
}

// Edit applies one edit_note operation to body and returns the new body. content is the text
// to insert; heading names the section of replaceSection; find the snippet of findReplace
// (empty content deletes it). Every refusal is -32602 naming the parameter at fault.
func Edit(body, op, content, heading, find string) (string, error) {
	switch op {
	case knowmind.EditAppend:
		if strings.TrimSpace(content) == "" {
			return "", knowmind.InvalidParam("content", "content is required for append")
		}
		return strings.TrimRight(body, "\n") + "\n\n" + strings.Trim(content, "\n") + "\n", nil
	case knowmind.EditPrepend:
		if strings.TrimSpace(content) == "" {
			return "", knowmind.InvalidParam("content", "content is required for prepend")
		}
		// Below the title: the H1 names the note and stays its first line.
		lines := strings.SplitAfter(body, "\n")
		for i, line := range lines {
			if strings.TrimSpace(line) == "" {
				continue
			}
			if level, _, ok := atx(line); ok && level == 1 {
				head := strings.Join(lines[:i+1], "")
				if !strings.HasSuffix(head, "\n") {
					head += "\n"
				}
				return head + "\n" + strings.Trim(content, "\n") + "\n\n" + strings.TrimLeft(strings.Join(lines[i+1:], ""), "\n"), nil
			}
			break
		}
		return strings.Trim(content, "\n") + "\n\n" + strings.TrimLeft(body, "\n"), nil
	case knowmind.EditReplace:
		if strings.TrimSpace(content) == "" {
			return "", knowmind.InvalidParam("content", "content is required for replace (use knowmind_delete_note to remove a note)")
		}
		return content, nil
	case knowmind.EditReplaceSection:
		return replaceSection(body, heading, content)
	case knowmind.EditFindReplace:
		if find == "" {
			return "", knowmind.InvalidParam("find", "find is required for findReplace")
		}
		switch n := strings.Count(body, find); n {
		case 0:
			return "", knowmind.InvalidParam("find", "find: the snippet does not occur in the note")
		case 1:
			return strings.Replace(body, find, content, 1), nil
		default:
			return "", knowmind.InvalidParam("find", "find: the snippet occurs %d times; give a longer, unique one", n)
		}
	}
	return "", knowmind.InvalidParam("op", "op must be one of append, prepend, replace, replaceSection, findReplace")
}

// replaceSection replaces the body of the section under heading (matched without the #s,
// case-insensitively; it must be unique) up to the next heading of the same or a higher level.
// The heading line stays.
func replaceSection(body, heading, content string) (string, error) {
	want := strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(heading), "#"))
	if want == "" {
		return "", knowmind.InvalidParam("heading", "heading is required for replaceSection")
	}
	lines := strings.Split(body, "\n")
	start, level, found := -1, 0, 0
	fenced := false
	for i, line := range lines {
		if isFence(line) {
			fenced = !fenced
			continue
		}
		if l, text, ok := atx(line); ok && !fenced && strings.EqualFold(text, want) {
			found++
			if start < 0 {
				start, level = i, l
			}
		}
	}
	switch {
	case found == 0:
		return "", knowmind.InvalidParam("heading", "heading: no section %q in the note", runes.Truncate(want, 80))
	case found > 1:
		return "", knowmind.InvalidParam("heading", "heading: %d sections are called %q", found, runes.Truncate(want, 80))
	}
	end := len(lines)
	fenced = false
	for i := start + 1; i < len(lines); i++ {
		if isFence(lines[i]) {
			fenced = !fenced
			continue
		}
		if l, _, ok := atx(lines[i]); ok && !fenced && l <= level {
			end = i
			break
		}
	}
	var b strings.Builder
	b.WriteString(strings.Join(lines[:start+1], "\n"))
	b.WriteString("\n")
	if c := strings.Trim(content, "\n"); c != "" {
		b.WriteString("\n" + c + "\n")
	}
	if end < len(lines) {
		b.WriteString("\n" + strings.Join(lines[end:], "\n"))
	}
	return b.String(), nil
}

// RewriteWikiLinks points the [[links]] to oldTitle (case-insensitive, outside code fences) at
// newTitle, keeping a "#section" suffix and a "|label", and reports how many it rewrote.
func RewriteWikiLinks(body, oldTitle, newTitle string) (string, int) {
	lines := strings.Split(body, "\n")
	fenced, n := false, 0
	old := strings.ToLower(strings.TrimSpace(oldTitle))
	for i, line := range lines {
		if isFence(line) {
			fenced = !fenced
			continue
		}
		if fenced || !strings.Contains(line, "[[") {
			continue
		}
		lines[i] = wikiLink.ReplaceAllStringFunc(line, func(m string) string {
			inner := m[2 : len(m)-2]
			target, label, hasLabel := strings.Cut(inner, "|")
			title, section, hasSection := strings.Cut(target, "#")
			if strings.ToLower(strings.TrimSpace(title)) != old {
				return m
			}
			n++
			out := "[[" + newTitle
			if hasSection {
				out += "#" + section
			}
			if hasLabel {
				out += "|" + label
			}
			return out + "]]"
		})
	}
	return strings.Join(lines, "\n"), n
}

// SetTitle replaces the text of the body's leading "# H1" line with title.
func SetTitle(body, title string) string {
	lines := strings.Split(body, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) == "" {
			continue
		}
		if level, _, ok := atx(line); ok && level == 1 {
			lines[i] = "# " + title
		}
		break
	}
	return strings.Join(lines, "\n")
}
