package localdgraph

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child killed with SIGKILL is noticed, restarted, and healthy again, with the flags it
// started with (here bulk-load mode's remove-on-update cache).
func TestKilledAlphaIsRestarted(t *testing.T) {
	if _, err := FindBinary(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := Start(context.Background(), Config{DataDir: dir, PortOffset: -1, GracePeriod: 5 * time.Second, CacheMB: 300, CacheRemoveOnUpdate: true})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if !c.Healthy() {
		t.Fatal("not healthy after start")
	}
	const wantCache = "size-mb=300; remove-on-update=true"
	if args := cmdline(t, c.Pid("alpha1")); !strings.Contains(args, "--cache\x00"+wantCache+"\x00") {
		t.Fatalf("alpha's command line lacks --cache %q: %q", wantCache, args)
	}
	old := c.Pid("alpha1")
	if err := c.Kill("alpha1"); err != nil {
		t.Fatal(err)
	}
	sawUnhealthy := false
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		if !c.Healthy() {
			sawUnhealthy = true
		} else if sawUnhealthy && c.Pid("alpha1") != old {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !sawUnhealthy {
		t.Fatal("cluster never reported unhealthy after SIGKILL")
	}
	if !c.Healthy() || c.Pid("alpha1") == old {
		t.Fatalf("alpha not restarted: healthy=%v pid %d→%d", c.Healthy(), old, c.Pid("alpha1"))
	}
	if args := cmdline(t, c.Pid("alpha1")); !strings.Contains(args, "--cache\x00"+wantCache+"\x00") {
		t.Errorf("restarted alpha's command line lacks --cache %q: %q", wantCache, args)
	}
}

// cmdline is a process's arguments, NUL-separated as /proc has them.
func cmdline(t *testing.T, pid int) string {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// Stop leaves no child running.
func TestStopLeavesNoOrphans(t *testing.T) {
	c, err := Start(context.Background(), Config{DataDir: t.TempDir(), PortOffset: -1, GracePeriod: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	pids := []int{c.Pid("zero"), c.Pid("alpha1")}
	c.Stop()
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("pid %d still exists after Stop (err=%v)", pid, err)
		}
	}
}

func TestMissingBinarySaysHowToGetIt(t *testing.T) {
	_, err := Start(context.Background(), Config{Binary: "/nonexistent/dgraph", DataDir: t.TempDir()})
	if !errors.Is(err, ErrBinaryMissing) {
		t.Fatalf("err = %v, want ErrBinaryMissing", err)
	}
}

// The alphas' Go memory settings reach their environment; without any they inherit ours.
func TestAlphaEnv(t *testing.T) {
	if env := alphaEnv([]string{"A=1"}, Config{}); env != nil {
		t.Errorf("no settings: env %q, want nil (inherited)", env)
	}
	env := alphaEnv([]string{"A=1"}, Config{MemLimitMB: 3072, GCPercent: 50})
	for _, want := range []string{"A=1", "GOMEMLIMIT=3072MiB", "GOGC=50"} {
		if !slices.Contains(env, want) {
			t.Errorf("env %q lacks %s", env, want)
		}
	}
}
