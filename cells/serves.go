package cells

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// The serve processes of a directory file confirm each read-only mark to the mover, so a move
// exports only once no write a serve admitted before the mark is still running.
//
// Each serve registers in the folder beside the directory file (cells.json.serves/): it holds an
// exclusive flock on <id>.lock for as long as it lives, and keeps in <id>.acks (JSON, replaced
// whole) the move id of every mark it has seen with its writes to that tenant drained. The mover
// lists the lock files; one it can lock is a dead serve's (removed), every other must
// acknowledge the move id within AckTimeout, else the move gives up and lifts the mark.

// AckTimeout is how long a move waits for every running serve to confirm its read-only mark: a
// write a serve admitted before the mark runs at most its call timeout, but a move does not wait
// that long; it gives up, and is tried again.
var AckTimeout = 30 * time.Second

// servesDir is the folder the serve processes of the directory file at path register in.
func servesDir(path string) string { return path + ".serves" }

// registration is one serve process in servesDir.
type registration struct {
	lock *os.File // held with an exclusive flock until close
	acks string   // the acknowledgements file
}

// register enters this process in servesDir(path).
func register(path string) (*registration, error) {
	dir := servesDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	id := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(b))
	f, err := os.OpenFile(filepath.Join(dir, id+".lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("register serve in %s: %w", dir, err)
	}
	reg := &registration{lock: f, acks: filepath.Join(dir, id+".acks")}
	if err := reg.write(map[string]string{}); err != nil {
		reg.close()
		return nil, err
	}
	return reg, nil
}

// write replaces the acknowledgements file with acks (tenant → move id).
func (r *registration) write(acks map[string]string) error {
	data, err := json.Marshal(acks)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(r.acks), ".acks-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), r.acks)
}

// close leaves the folder.
func (r *registration) close() {
	os.Remove(r.acks)
	os.Remove(r.lock.Name())
	r.lock.Close()
}

// newMoveID names one move's read-only mark.
func newMoveID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// awaitServes waits until every serve process registered for the directory file at path has
// acknowledged tenant's mark move, or AckTimeout passes (an error naming the ones that did not).
func awaitServes(ctx context.Context, path, tenant, move string) error {
	dir := servesDir(path)
	deadline := time.Now().Add(AckTimeout)
	for {
		pending, err := unacknowledged(dir, tenant, move)
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("serve processes %s did not confirm the read-only mark of tenant %q within %s (a write of theirs still runs?)",
				strings.Join(pending, ", "), tenant, AckTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// awaitSwitch waits until every serve process registered for the directory file at path has
// seen the directory without a read-only mark of tenant (it holds no acknowledgement of one), or
// AckTimeout passes.
func awaitSwitch(ctx context.Context, path, tenant string) error {
	dir := servesDir(path)
	deadline := time.Now().Add(AckTimeout)
	for {
		pending, err := liveServes(dir, func(acks map[string]string) bool { return acks[tenant] != "" })
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("serve processes %s have not seen tenant %q switched within %s", strings.Join(pending, ", "), tenant, AckTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// unacknowledged lists the live serves in dir that have not acknowledged tenant's mark move,
// removing the files of dead ones.
func unacknowledged(dir, tenant, move string) ([]string, error) {
	return liveServes(dir, func(acks map[string]string) bool { return acks[tenant] != move })
}

// liveServes lists the live serves in dir whose acknowledgements (nil when unreadable) pending
// holds for, removing the files of dead ones.
func liveServes(dir string, pending func(acks map[string]string) bool) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".lock")
		if !ok {
			continue
		}
		lockPath := filepath.Join(dir, e.Name())
		f, err := os.OpenFile(lockPath, os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // it left meanwhile
		}
		if err != nil {
			return nil, err
		}
		if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil {
			// Nobody holds it: the serve is gone (killed); its files go too.
			os.Remove(filepath.Join(dir, id+".acks"))
			os.Remove(lockPath)
			f.Close()
			continue
		}
		f.Close()
		data, err := os.ReadFile(filepath.Join(dir, id+".acks"))
		var acks map[string]string
		if err == nil {
			err = json.Unmarshal(data, &acks)
		}
		if err != nil {
			acks = nil
		}
		if pending(acks) {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out, nil
}
