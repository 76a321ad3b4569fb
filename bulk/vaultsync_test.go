package bulk

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

// creating is a NoteStore with no notes that records what a sync creates; after the first
// note it calls then.
type creating struct {
	NoteStore
	bodies []string
	then   func()
}

func (s *creating) ProjectNotes(context.Context, knowmind.NoteScope, string, func(knowmind.Note) error) error {
	return nil
}

func (s *creating) CreateNote(_ context.Context, _ knowmind.NoteScope, in knowmind.CreateNoteInput) (knowmind.NoteWriteResult, error) {
	s.bodies = append(s.bodies, in.Body)
	if len(s.bodies) == 1 && s.then != nil {
		s.then()
	}
	return knowmind.NoteWriteResult{}, nil
}

// TestSyncVaultReadsEachFileInTurn: a sync lists the vault first and reads each file when it
// syncs it, so it never holds the whole vault in memory: a file changed while an earlier one
// syncs is synced as it reads then.
func TestSyncVaultReadsEachFileInTurn(t *testing.T) {
	dir := writeFiles(t, map[string]string{"A.md": "# A\n\nErst.", "B.md": "# B\n\nAlt."})
	store := &creating{then: func() {
		if err := os.WriteFile(filepath.Join(dir, "B.md"), []byte("# B\n\nNeu."), 0o600); err != nil {
			t.Error(err)
		}
	}}
	sum, err := SyncVault(context.Background(), store, "main", dir, knowmind.Actor{Principal: "cli:test", Via: "cli"})
	if err != nil || sum.Created != 2 {
		t.Fatalf("sync %+v %v", sum, err)
	}
	if len(store.bodies) != 2 || !strings.Contains(store.bodies[1], "Neu.") {
		t.Fatalf("created %q, want B as it read when its turn came", store.bodies)
	}
}
