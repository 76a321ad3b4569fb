package bulk

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
)

// A Markdown folder (an Obsidian vault) imports as one document per .md
// file: title = file name without .md, content = the text without its YAML
// front matter, tags = the front matter's tags, source = the path in the
// folder, id = a UUID derived from that path (so links resolve and a second
// import of the same folder finds its notes). Each [[wiki link]] to another
// note of the folder becomes a REFERENCES relation; links to notes that do
// not exist are counted, not imported. Hidden folders (.obsidian, .git,
// .trash) are skipped; a file that is a symbolic link out of the folder is
// refused (its item carries the error, so the import's summary counts it).

// WikiLinkRelation is the relation a [[wiki link]] becomes.
const WikiLinkRelation = "REFERENCES"

// noteNamespace derives note ids from their paths (UUID version 5).
var noteNamespace = uuid.MustParse("5b7f3f0e-6a53-4c8e-9d0b-6f1e2c0a9b11")

// maxNoteBytes bounds one note file (content is at most MaxContentChars characters).
const maxNoteBytes = 4 * knowmind.MaxContentChars

type note struct {
	rel   string // slash-separated path in the folder
	rec   knowmind.Record
	links []string // wiki link targets as written, in order
	err   error
}

// Markdown is a Markdown folder as an import source.
type Markdown struct {
	dir        string
	key        string
	notes      []note
	relations  []Item
	unresolved int // links to notes that are not in the folder
}

// OpenMarkdown reads every .md file under dir (or the one file dir names).
func OpenMarkdown(dir string) (*Markdown, error) {
	s := &Markdown{dir: dir}
	root := dir
	var files []string
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if info.IsDir() {
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".md") {
				files = append(files, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	} else {
		root, files = filepath.Dir(dir), []string{dir}
	}
	slices.Sort(files)
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	h := sha256.New()
	for _, f := range files {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			return nil, err
		}
		n := note{rel: filepath.ToSlash(rel)}
		if err := readNote(realRoot, f, &n); err != nil {
			n.err = err
		}
		fmt.Fprintf(h, "%s\x00%d\x00%s\x00", n.rel, len(n.rec.Content), n.rec.Content)
		s.notes = append(s.notes, n)
	}
	s.key = "md:" + hex.EncodeToString(h.Sum(nil))[:40]
	s.resolve()
	return s, nil
}

// errOutside refuses a file that is a symbolic link out of the folder: an import reads what
// the folder holds, never what a link in it points at elsewhere on the machine.
var errOutside = errors.New("a symbolic link out of the folder: not imported")

// readRegular reads the regular file at real (a resolved path), at most limit bytes: a file
// over it is tooLarge(), anything but a regular file errNotRegular (checked before opening: a
// named pipe blocks its reader). The bound holds on what is read, so a file that grows after
// its size was checked cannot pass it.
func readRegular(real string, limit int64, tooLarge func() error) ([]byte, os.FileInfo, error) {
	info, err := os.Stat(real)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, errNotRegular
	}
	if info.Size() > limit {
		return nil, nil, tooLarge()
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, tooLarge()
	}
	return data, info, nil
}

// errNotRegular refuses a .md name on something that is not a regular file (a named pipe, a
// device), which a read would block on or never finish.
var errNotRegular = errors.New("not a regular file: not imported")

// readNote reads file, refusing it when its real path lies outside realRoot (the folder's).
func readNote(realRoot, file string, n *note) error {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return err
	}
	if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return errOutside
	}
	data, info, err := readRegular(real, maxNoteBytes, func() error {
		return knowmind.Internal(knowmind.ReasonTooLarge, "note exceeds %d characters", knowmind.MaxContentChars)
	})
	if err != nil {
		return err
	}
	body, tags := splitFrontMatter(string(data))
	mtime := info.ModTime().UTC()
	n.rec = knowmind.Record{
		Type: knowmind.RecordDocument, ID: noteID(n.rel),
		Title: strings.TrimSuffix(path.Base(n.rel), path.Ext(n.rel)), Content: body, Tags: tags, Source: n.rel,
		CreatedAt: &mtime, UpdatedAt: &mtime, ValidFrom: &mtime,
	}
	n.links = WikiLinks(body)
	return nil
}

// noteID is the id of the note at rel (slash-separated path in the folder).
func noteID(rel string) string { return uuid.NewSHA1(noteNamespace, []byte(rel)).String() }

// resolve turns every note's links into relation items, as Obsidian resolves
// them: a target with a folder matches the path's end, a bare name the file
// name (case-insensitive); of several, the shortest path wins.
func (s *Markdown) resolve() {
	byName := map[string][]string{} // lower-case name without .md -> rel paths (sorted: shortest first)
	for _, n := range s.notes {
		if n.err != nil {
			continue
		}
		name := strings.ToLower(strings.TrimSuffix(path.Base(n.rel), path.Ext(n.rel)))
		byName[name] = append(byName[name], n.rel)
	}
	for _, rels := range byName {
		slices.SortStableFunc(rels, func(a, b string) int { return len(a) - len(b) })
	}
	for _, n := range s.notes {
		seen := map[string]bool{}
		for _, target := range n.links {
			t := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(target), ".md"))
			t = strings.TrimPrefix(t, "/")
			var match string
			for _, rel := range byName[strings.ToLower(path.Base(t))] {
				stem := strings.ToLower(strings.TrimSuffix(rel, path.Ext(rel)))
				if stem == t || strings.HasSuffix(stem, "/"+t) || !strings.Contains(t, "/") {
					match = rel
					break
				}
			}
			if match == "" {
				s.unresolved++
				continue
			}
			if match == n.rel || seen[match] {
				continue
			}
			seen[match] = true
			s.relations = append(s.relations, Item{
				Where:  n.rel + " → [[" + target + "]]",
				Record: knowmind.Record{Type: knowmind.RecordRelation, From: n.rec.ID, To: noteID(match), RelType: WikiLinkRelation},
			})
		}
	}
}

func (s *Markdown) Name() string { return s.dir }
func (s *Markdown) Key() string  { return s.key }
func (s *Markdown) Total() int   { return len(s.notes) + len(s.relations) }

// UnresolvedLinks is how many wiki links name no note of the folder.
func (s *Markdown) UnresolvedLinks() int { return s.unresolved }

func (s *Markdown) Each(ctx context.Context, phase Phase, fn func(Item) error) error {
	if phase == PhaseRelations {
		for _, it := range s.relations {
			if err := fn(it); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range s.notes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(Item{Where: n.rel, Record: n.rec, Err: n.err}); err != nil {
			return err
		}
	}
	return nil
}

var (
	fencedCode = regexp.MustCompile("(?ms)^[ \t]*(```|~~~).*?^[ \t]*(```|~~~)[ \t]*$")
	inlineCode = regexp.MustCompile("`[^`\n]*`")
	// [[target]], [[target|alias]], [[target#heading]], [[target^block]], ![[embed]].
	wikiLink = regexp.MustCompile(`(!?)\[\[([^\[\]|#^\n]*)(?:[#^][^\[\]|\n]*)?(?:\|[^\[\]\n]*)?\]\]`)
)

// WikiLinks returns the targets of the [[wiki links]] in a Markdown text, in
// order, outside code; embeds of files other than notes (![[image.png]]) are
// not links.
func WikiLinks(text string) []string {
	text = fencedCode.ReplaceAllString(text, "")
	text = inlineCode.ReplaceAllString(text, "")
	var out []string
	for _, m := range wikiLink.FindAllStringSubmatch(text, -1) {
		target := strings.TrimSpace(m[2])
		if target == "" {
			continue // [[#heading]]: a link into the same note
		}
		if ext := path.Ext(target); m[1] == "!" && ext != "" && !strings.EqualFold(ext, ".md") {
			continue
		}
		out = append(out, target)
	}
	return out
}

// splitFrontMatter removes a leading YAML front matter block (--- … ---) and
// returns the body and the block's tags (tags: [a, b], tags: a, or a list of
// "- a" lines).
func splitFrontMatter(text string) (string, []string) {
	text = strings.TrimPrefix(text, "\ufeff")
	if !strings.HasPrefix(text, "---\n") && !strings.HasPrefix(text, "---\r\n") {
		return text, nil
	}
	lines := strings.SplitAfter(text, "\n")
	end := -1
	for i := 1; i < len(lines); i++ {
		if strings.TrimSpace(lines[i]) == "---" {
			end = i
			break
		}
	}
	if end < 0 {
		return text, nil
	}
	var tags []string
	inTags := false
	for _, l := range lines[1:end] {
		l = strings.TrimRight(l, "\r\n")
		trimmed := strings.TrimSpace(l)
		if inTags && strings.HasPrefix(trimmed, "- ") {
			tags = append(tags, cleanTag(trimmed[2:]))
			continue
		}
		inTags = false
		key, val, ok := strings.Cut(l, ":")
		if !ok || strings.TrimSpace(key) != "tags" {
			continue
		}
		val = strings.TrimSpace(val)
		if val == "" {
			inTags = true
			continue
		}
		val = strings.TrimSuffix(strings.TrimPrefix(val, "["), "]")
		for _, t := range strings.FieldsFunc(val, func(r rune) bool { return r == ',' || r == ' ' }) {
			tags = append(tags, cleanTag(t))
		}
	}
	tags = slices.DeleteFunc(tags, func(t string) bool { return t == "" })
	return strings.Join(lines[end+1:], ""), tags
}

func cleanTag(t string) string {
	return strings.TrimPrefix(strings.Trim(strings.TrimSpace(t), `"'`), "#")
}
