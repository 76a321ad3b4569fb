package cells

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
)

// A serve process and a mover share the directory file only: the mover's read-only mark is
// confirmed by the serve once its write in flight has finished, and from then on the serve
// refuses the tenant's writes (unavailable) while its reads and other tenants' writes go on. A
// killed serve does not hold a move up; a live one that never confirms makes the move give up.
func TestServingHoldsTheWritesOfAMarkedTenant(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), DirectoryFileName)
	s, err := OpenServing(nil, path, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	mark := func(tenant string, p *Placement) {
		t.Helper()
		if err := updateDirectory(path, func(d *Directory) {
			if p == nil {
				delete(d.Tenants, tenant)
			} else {
				d.Tenants[tenant] = *p
			}
		}); err != nil {
			t.Fatal(err)
		}
	}
	unavailable := func(err error) bool {
		e := knowmind.AsError(err)
		return e != nil && e.Code == knowmind.EUNAVAILABLE
	}

	leave, err := s.Enter(ctx, "ada", true) // a write in flight
	if err != nil {
		t.Fatal(err)
	}
	mark("ada", &Placement{Cell: HomeCell, ReadOnly: true, Move: "m1"})
	acked := make(chan error, 1)
	go func() { acked <- awaitServes(ctx, path, "ada", "m1") }()
	select {
	case err := <-acked:
		t.Fatalf("the mark was confirmed while a write of the tenant ran (%v)", err)
	case <-time.After(500 * time.Millisecond):
	}
	if _, err := s.Enter(ctx, "ada", false); err != nil {
		t.Fatalf("a read during the mark: %v", err)
	}
	other, err := s.Enter(ctx, "bob", true)
	if err != nil {
		t.Fatalf("another tenant's write during the mark: %v", err)
	}
	other()
	leave()
	select {
	case err := <-acked:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the mark was not confirmed after the write finished")
	}
	if _, err := s.Enter(ctx, "ada", true); !unavailable(err) {
		t.Fatalf("a write after the confirmed mark: %v, want unavailable", err)
	}

	// A killed serve (its lock released, its files left) is skipped and cleaned up.
	dead, err := register(path)
	if err != nil {
		t.Fatal(err)
	}
	dead.lock.Close()
	mark("ada", &Placement{Cell: HomeCell, ReadOnly: true, Move: "m2"})
	if err := awaitServes(ctx, path, "ada", "m2"); err != nil {
		t.Fatalf("a dead serve held the move: %v", err)
	}
	if _, err := os.Stat(dead.acks); !os.IsNotExist(err) {
		t.Fatalf("the dead serve's acknowledgements are left: %v", err)
	}

	// A live serve that never confirms: the move gives up, naming it.
	mute, err := register(path)
	if err != nil {
		t.Fatal(err)
	}
	defer mute.close()
	was := AckTimeout
	AckTimeout = 300 * time.Millisecond
	defer func() { AckTimeout = was }()
	mark("ada", &Placement{Cell: HomeCell, ReadOnly: true, Move: "m3"})
	id := strings.TrimSuffix(filepath.Base(mute.acks), ".acks")
	if err := awaitServes(ctx, path, "ada", "m3"); err == nil || !strings.Contains(err.Error(), id) {
		t.Fatalf("a serve that never confirmed: %v, want an error naming %s", err, id)
	}

	// The mark lifted: writes again.
	mark("ada", nil)
	if leave, err := s.Enter(ctx, "ada", true); err != nil {
		t.Fatalf("a write after the mark was lifted: %v", err)
	} else {
		leave()
	}

	// A tenant of a cell this serve cannot open is refused, naming the cell; never served
	// from home.
	if err := updateDirectory(path, func(d *Directory) {
		d.Cells["far"] = Cell{}
		d.Tenants["cyd"] = Placement{Cell: "far"}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Workspace(ctx, "cyd", false); !unavailable(err) || !strings.Contains(err.Error(), "cell far") {
		t.Fatalf("a tenant of an unreachable cell: %v", err)
	}
}
