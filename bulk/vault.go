package bulk

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/markdown"
)

// A vault sync keeps a project's notes in step with a Markdown folder (an Obsidian vault), in
// both directions (docs/notes.md, "Vault sync"):
//
//   - SyncVault: each .md file is a note of the project, matched by its folder and file name
//     (the note's path and title). A file whose normalised text equals the note's is unchanged;
//     a changed one replaces the note's text through EditNote (a new revision: the former body
//     is kept, wiki links added and closed as an edit does); a file no note matches is created.
//     Notes with no file are left as they are (counted): a sync never deletes.
//   - ExportVault writes the project's notes back as files: folder = path, file name = title,
//     the frontmatter, then the body.
//
// Both sides go through NormaliseNote, so an import followed by an export gives back the
// folder's files in their normalised form, and a second sync of an unedited folder writes
// nothing.

// NoteStore is what a vault sync needs of a tenant (graph.Tenant has it).
type NoteStore interface {
	ProjectNotes(ctx context.Context, scope knowmind.NoteScope, project string, each func(knowmind.Note) error) error
	CreateNote(ctx context.Context, scope knowmind.NoteScope, in knowmind.CreateNoteInput) (knowmind.NoteWriteResult, error)
	EditNote(ctx context.Context, scope knowmind.NoteScope, in knowmind.EditNoteInput) (knowmind.NoteWriteResult, error)
}

// VaultFile is one .md file of a vault as a note: ListVault names it, Read reads it.
type VaultFile struct {
	Rel   string // slash-separated path in the folder
	Path  string // the note's folder ("" = the project's root)
	Title string // the file name without .md
	Text  string // NormaliseNote of the file, once read
	Err   error  // why the file cannot be a note (read, size, frontmatter), once read

	file, realRoot string // where Read reads it, and the folder's real path it must lie in
}

// ListVault lists the .md files under dir as OpenMarkdown's walk does (hidden folders
// skipped), sorted, without reading them: a sync reads one file at a time (Read), so its
// memory holds one note's text however large the vault.
func ListVault(dir string) ([]VaultFile, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: a vault sync reads a folder", dir)
	}
	var files []string
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
	slices.Sort(files)
	realRoot, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	out := make([]VaultFile, 0, len(files))
	for _, f := range files {
		rel, err := filepath.Rel(dir, f)
		if err != nil {
			return nil, err
		}
		rel = filepath.ToSlash(rel)
		v := VaultFile{Rel: rel, Title: strings.TrimSuffix(path.Base(rel), path.Ext(rel))}
		if folder := path.Dir(rel); folder != "." {
			v.Path = folder
		}
		v.file, v.realRoot = f, realRoot
		out = append(out, v)
	}
	return out, nil
}

// Read reads the file into Text, or says in Err why it cannot be a note: a symbolic link out
// of the folder, not a regular file, over the note's bound, or its frontmatter.
func (v *VaultFile) Read() {
	data, err := readInside(v.realRoot, v.file, knowmind.MaxNoteBodyChars*4)
	if err == nil {
		v.Text, err = NormaliseNote(v.Title, string(data))
	}
	v.Err = err
}

// readInside reads file unless its real path lies outside realRoot, it is not a regular file
// or it is over max bytes.
func readInside(realRoot, file string, max int64) ([]byte, error) {
	real, err := filepath.EvalSymlinks(file)
	if err != nil {
		return nil, err
	}
	if r, err := filepath.Rel(realRoot, real); err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return nil, errOutside
	}
	data, _, err := readRegular(real, max, func() error {
		return knowmind.Internal(knowmind.ReasonTooLarge, "note exceeds %d characters", knowmind.MaxNoteBodyChars)
	})
	return data, err
}

// NormaliseNote is a vault file's text as a note holds it and an export writes it back:
// line ends LF, no byte-order mark; the frontmatter (if any) as YAML written by yaml.v3 (keys
// sorted, two-space indent, quoting as that library chooses); the body trimmed, starting with
// "# Title" (title = the file name: the line is added when the body's first line is another
// text), and one newline at the end. It is idempotent.
func NormaliseNote(title, text string) (string, error) {
	text = strings.TrimPrefix(text, "\ufeff")
	fm, body, err := markdown.Split(text)
	if err != nil {
		return "", err
	}
	body = strings.TrimSpace(body)
	if markdown.Title(body) != title {
		body = strings.TrimSpace("# " + title + "\n\n" + body)
	}
	block, err := frontmatterBlock(fm)
	if err != nil {
		return "", err
	}
	return block + body + "\n", nil
}

// NoteFileText is the file an export writes for a note (NormaliseNote's form).
func NoteFileText(n knowmind.Note) (string, error) {
	block, err := frontmatterBlock(n.Frontmatter)
	if err != nil {
		return "", err
	}
	return block + strings.TrimSpace(n.Content) + "\n", nil
}

func frontmatterBlock(fm map[string]any) (string, error) {
	if len(fm) == 0 {
		return "", nil
	}
	var b strings.Builder
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(fm); err != nil {
		return "", knowmind.InvalidParam("body", "the frontmatter cannot be written as YAML: %v", err)
	}
	return "---\n" + b.String() + "---\n", nil
}

// NoteFileName is the file name (without .md) of a note's title: characters a file name cannot
// hold on common systems (/ \ : * ? " < > |) become "-".
func NoteFileName(title string) string {
	name := strings.Map(func(r rune) rune {
		if strings.ContainsRune(`/\:*?"<>|`, r) || r < 0x20 {
			return '-'
		}
		return r
	}, strings.TrimSpace(title))
	if name == "" || name == "." || name == ".." {
		name = "untitled"
	}
	return name
}

// VaultSync counts what a sync did; Failures lists the files it refused.
type VaultSync struct {
	Created, Updated, Unchanged, Failed int
	// NotInFolder are the project's notes no file matched (left as they are).
	NotInFolder int
	Failures    []Failure
}

func vaultKey(folder, title string) string { return folder + "\x00" + strings.ToLower(title) }

// SyncVault brings the project's notes in step with the folder dir (see the top of this file).
// actor says who writes (a person at the CLI). A file's refusal is counted and listed, the
// other files go on; an error of the store itself ends the sync (running it again resumes:
// what was written is then unchanged).
func SyncVault(ctx context.Context, store NoteStore, project, dir string, actor knowmind.Actor) (VaultSync, error) {
	var sum VaultSync
	files, err := ListVault(dir)
	if err != nil {
		return sum, err
	}
	scope := knowmind.NoteScope{Principal: actor.Principal}
	existing := map[string]knowmind.Note{}
	err = store.ProjectNotes(ctx, scope, project, func(n knowmind.Note) error {
		existing[vaultKey(n.Path, n.Title)] = n
		return nil
	})
	if err != nil {
		return sum, err
	}
	matched := map[string]bool{}
	fail := func(where string, id string, err error) {
		sum.Failed++
		if len(sum.Failures) < MaxFailures {
			sum.Failures = append(sum.Failures, Failure{Where: where, ID: id, Err: err})
		}
	}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return sum, err
		}
		f.Read()
		if f.Err != nil {
			fail(f.Rel, "", f.Err)
			continue
		}
		key := vaultKey(f.Path, f.Title)
		n, ok := existing[key]
		if !ok {
			_, err := store.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: project, Body: f.Text, Path: f.Path,
				Class: knowmind.ClassUserDoc, Actor: actor})
			if err != nil {
				if !isInputError(err) {
					return sum, fmt.Errorf("%s: %w", f.Rel, err)
				}
				fail(f.Rel, "", err)
				continue
			}
			sum.Created++
			continue
		}
		matched[key] = true
		now, err := NoteFileText(n)
		if err == nil && now == f.Text {
			sum.Unchanged++
			continue
		}
		text := f.Text
		if len(n.Frontmatter) > 0 && !strings.HasPrefix(text, "---\n") {
			// An edit without frontmatter keeps the note's; an empty one clears it.
			text = "---\n{}\n---\n" + text
		}
		_, err = store.EditNote(ctx, scope, knowmind.EditNoteInput{ID: n.ID, VersionToken: n.VersionToken,
			Op: knowmind.EditReplace, Content: text, Actor: actor})
		if err != nil {
			if !isInputError(err) {
				return sum, fmt.Errorf("%s: %w", f.Rel, err)
			}
			fail(f.Rel, n.ID, err)
			continue
		}
		sum.Updated++
	}
	for key := range existing {
		if !matched[key] {
			sum.NotInFolder++
		}
	}
	return sum, nil
}

// isInputError says whether err is the file's fault (a knowmind error other than
// unavailable/internal), so the sync counts it and goes on.
func isInputError(err error) bool {
	var ke *knowmind.Error
	if !errors.As(err, &ke) {
		return false
	}
	switch ke.Code {
	case knowmind.EINVALID, knowmind.ECONFLICT, knowmind.ECONSTRAINT:
		return true
	case knowmind.EINTERNAL:
		return ke.Reason == knowmind.ReasonTooLarge || ke.Reason == knowmind.ReasonContentRequired
	}
	return false
}

// ExportVault writes the project's notes into dir (which must be empty or not exist) as
// NoteFileText files at <path>/<NoteFileName(title)>.md; it returns how many it wrote. Two
// titles that give one file name keep the first; the second gets its id appended. The folders
// it makes are 0700 and the files 0600: they hold the tenant's notes.
func ExportVault(ctx context.Context, store NoteStore, scope knowmind.NoteScope, project, dir string) (int, error) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return 0, fmt.Errorf("%s is not empty: a Markdown export writes into a new or empty folder", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	written := 0
	taken := map[string]bool{}
	err := store.ProjectNotes(ctx, scope, project, func(n knowmind.Note) error {
		text, err := NoteFileText(n)
		if err != nil {
			return fmt.Errorf("note %s: %w", n.ID, err)
		}
		rel := path.Join(n.Path, NoteFileName(n.Title)+".md")
		if taken[strings.ToLower(rel)] {
			rel = path.Join(n.Path, NoteFileName(n.Title)+" "+n.ID+".md")
		}
		if !filepath.IsLocal(filepath.FromSlash(rel)) {
			return fmt.Errorf("note %s: path %q leaves the folder", n.ID, rel)
		}
		taken[strings.ToLower(rel)] = true
		file := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			return err
		}
		written++
		return nil
	})
	return written, err
}
