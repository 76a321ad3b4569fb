package localdgraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// One process at a time runs a data dir's Dgraph: the one holding an flock on
// ownerFile in it. Another process finding it held uses that Dgraph without
// starting (or stopping) one; the lock goes with its holder, however it ends,
// so a long-running user can take the Dgraph over when the holder exits
// (the holder's Dgraph stops with it) instead of being left without one.
const ownerFile = "owner.lock"

// Owner is the held lock of a data dir.
type Owner struct {
	f *os.File
}

// OwnedError says that another process runs the data dir's Dgraph.
type OwnedError struct {
	Dir     string
	PID     int    // 0 if the lock file does not say
	Command string // what the holder runs, e.g. "knowmind serve"
}

func (e *OwnedError) Error() string {
	who := "another process"
	if e.PID > 0 {
		who = fmt.Sprintf("process %d (%s)", e.PID, e.Command)
	}
	return fmt.Sprintf("the managed Dgraph of %s is run by %s", e.Dir, who)
}

// Own takes dir's lock without waiting, creating dir if needed. command
// names the caller in the lock file for the messages of others. A held
// lock gives *OwnedError.
func Own(dir, command string) (*Owner, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, ownerFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, holder(dir, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(fmt.Sprintf("%d %s\n", os.Getpid(), command)), 0)
	}
	return &Owner{f: f}, nil
}

// WaitOwn takes dir's lock once its holder lets go, asking every poll,
// until ctx ends.
func WaitOwn(ctx context.Context, dir, command string, poll time.Duration) (*Owner, error) {
	for {
		o, err := Own(dir, command)
		var owned *OwnedError
		if !errors.As(err, &owned) {
			return o, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(poll):
		}
	}
}

// Release lets the next process own the data dir.
func (o *Owner) Release() {
	if o == nil || o.f == nil {
		return
	}
	_ = o.f.Truncate(0)
	_ = syscall.Flock(int(o.f.Fd()), syscall.LOCK_UN)
	o.f.Close()
	o.f = nil
}

func holder(dir, path string) *OwnedError {
	e := &OwnedError{Dir: filepath.Dir(dir)}
	data, err := os.ReadFile(path)
	if err != nil {
		return e
	}
	pid, command, _ := strings.Cut(strings.TrimSpace(string(data)), " ")
	e.PID, _ = strconv.Atoi(pid)
	e.Command = command
	return e
}

// The port offset a data dir's Dgraph was first started with is recorded
// beside it: Dgraph remembers its members' addresses, so the same dir on
// other ports does not start, and every later command (serve, stdio, token,
// import, a desktop client's config) finds the ports without the flag.
const portOffsetFile = "port-offset"

// PortOffset is the port offset to run dir's Dgraph on: the recorded one;
// flag when none is recorded. A flag that was given explicitly and differs
// from the recorded offset is an error.
func PortOffset(dir string, flag int, explicit bool) (int, error) {
	data, err := os.ReadFile(filepath.Join(dir, portOffsetFile))
	if errors.Is(err, os.ErrNotExist) {
		return flag, nil
	}
	if err != nil {
		return 0, err
	}
	recorded, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		return 0, fmt.Errorf("%s: not a port offset: %q", filepath.Join(dir, portOffsetFile), data)
	}
	if explicit && flag != recorded {
		return 0, fmt.Errorf("--dgraph-port-offset %d: the data dir %s was created with port offset %d, and its Dgraph "+
			"knows its members by those ports; leave the flag out (the recorded offset is used) or pass %d",
			flag, filepath.Dir(dir), recorded, recorded)
	}
	return recorded, nil
}

// RecordPortOffset records offset for dir unless one is recorded already.
func RecordPortOffset(dir string, offset int) error {
	path := filepath.Join(dir, portOffsetFile)
	if _, err := os.Stat(path); err == nil {
		return nil
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.Itoa(offset)+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
