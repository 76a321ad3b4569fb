//go:build unix

package bulk

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
)

// TestVaultRefusesSpecialFiles: a .md name on something that is not a regular file (a named
// pipe) is refused like a link out of the folder, where reading it would block the import and
// the sync forever; the regular files beside it are read.
func TestVaultRefusesSpecialFiles(t *testing.T) {
	dir := writeFiles(t, map[string]string{"Mond.md": "# Mond\n\nZiel."})
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe.md"), 0o600); err != nil {
		t.Skipf("no named pipes here: %v", err)
	}
	type result struct {
		files []VaultFile
		md    *Markdown
		err   error
	}
	done := make(chan result, 1)
	go func() {
		files, err := ListVault(dir)
		if err != nil {
			done <- result{err: err}
			return
		}
		for i := range files {
			files[i].Read()
		}
		md, err := OpenMarkdown(dir)
		done <- result{files, md, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading a vault with a named pipe in it did not return")
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	if len(r.files) != 2 || r.files[0].Err != nil || r.files[1].Rel != "pipe.md" || !errors.Is(r.files[1].Err, errNotRegular) {
		t.Fatalf("vault files %+v, want Mond.md read and pipe.md refused", r.files)
	}
	if len(r.md.notes) != 2 || r.md.notes[0].err != nil || !errors.Is(r.md.notes[1].err, errNotRegular) {
		t.Fatalf("markdown notes %+v, want Mond.md read and pipe.md refused", r.md.notes)
	}
}

// notesOnly is a NoteStore holding notes to export.
type notesOnly struct {
	NoteStore
	notes []knowmind.Note
}

func (s notesOnly) ProjectNotes(_ context.Context, _ knowmind.NoteScope, _ string, each func(knowmind.Note) error) error {
	for _, n := range s.notes {
		if err := each(n); err != nil {
			return err
		}
	}
	return nil
}

// TestExportVaultPrivate: an exported vault holds a tenant's notes, so its folders and files
// are the exporting user's alone (0700, 0600), whatever the umask.
func TestExportVaultPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "vault")
	store := notesOnly{notes: []knowmind.Note{
		{ID: "a", Title: "Index", Content: "# Index\n\nText.", Frontmatter: map[string]any{}},
		{ID: "b", Path: "Projekte/Alt", Title: "Alpha", Content: "# Alpha\n\nText.", Frontmatter: map[string]any{}},
	}}
	n, err := ExportVault(context.Background(), store, knowmind.NoteScope{}, "main", dir)
	if err != nil || n != 2 {
		t.Fatalf("export: %d %v", n, err)
	}
	for rel, want := range map[string]fs.FileMode{".": 0o700, "Projekte": 0o700, "Projekte/Alt": 0o700,
		"Index.md": 0o600, "Projekte/Alt/Alpha.md": 0o600} {
		fi, err := os.Stat(filepath.Join(dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", rel, fi.Mode().Perm(), want)
		}
	}
}
