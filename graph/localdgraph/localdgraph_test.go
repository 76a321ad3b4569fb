package localdgraph

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"
)

// A child killed with SIGKILL is noticed, restarted, and healthy again.
func TestKilledAlphaIsRestarted(t *testing.T) {
	if _, err := FindBinary(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	c, err := Start(context.Background(), Config{DataDir: dir, PortOffset: -1, GracePeriod: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if !c.Healthy() {
		t.Fatal("not healthy after start")
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
