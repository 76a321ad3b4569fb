//go:build unix

package bulk

import (
	"errors"
	"path/filepath"
	"syscall"
	"testing"
	"time"
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
		files, err := ReadVault(dir)
		if err != nil {
			done <- result{err: err}
			return
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
