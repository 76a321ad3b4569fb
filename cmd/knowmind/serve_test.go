package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knowmind/knowmind/graph/localdgraph"
)

// The whole managed mode, as `make run` uses it: serve starts its own Dgraph,
// becomes ready, reports not-ready while a SIGKILLed alpha is restarted and
// ready again by itself, leaves no dgraph process behind on shutdown, and a
// second start finds the first one's data.
func TestServeManagedDgraphLifecycle(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a managed Dgraph")
	}
	dataDir := t.TempDir()
	offset := freeOffset(t)
	addr := freeAddr(t)
	args := []string{"--data-dir", dataDir, "--addr", addr, "--dgraph-port-offset", strconv.Itoa(offset), "--log-level", "warn"}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, args) }()
	waitReady(t, addr, true, 2*time.Minute, done)

	// Under `go test` stderr is no terminal: the development token goes to a
	// 0600 file, never to the log.
	if fi, err := os.Stat(filepath.Join(dataDir, "secrets", "dev-token")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("dev-token file: %v %v", fi, err)
	}

	alpha := dgraphPids(t, dataDir, "alpha")
	if len(alpha) != 1 {
		t.Fatalf("alpha processes under %s: %v", dataDir, alpha)
	}
	if err := syscall.Kill(alpha[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitReady(t, addr, false, 30*time.Second, done)
	waitReady(t, addr, true, 2*time.Minute, done)
	if now := dgraphPids(t, dataDir, "alpha"); len(now) != 1 || now[0] == alpha[0] {
		t.Fatalf("alpha after restart: %v (killed %d)", now, alpha[0])
	}
	tokens, err := os.ReadDir(filepath.Join(dataDir, "dgraph", "alpha1", "p"))
	if err != nil || len(tokens) == 0 {
		t.Fatalf("alpha data dir: %v", err)
	}

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if left := dgraphPids(t, dataDir, ""); len(left) != 0 {
		t.Fatalf("dgraph processes left after shutdown: %v", left)
	}

	// Second start on the same data: the guardian password set on the first
	// start still logs in, and the development token is not made again (the
	// first one is still stored).
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	done2 := make(chan error, 1)
	go func() { done2 <- runServe(ctx2, args) }()
	waitReady(t, addr, true, 2*time.Minute, done2)
	b, err := openBackend(context.Background(), Config{DataDir: dataDir, DgraphPortOffset: offset, DgraphUser: "groot"}, newLogger("error"), opening{})
	if err != nil {
		t.Fatal(err)
	}
	toks, err := b.client.ListTokens(context.Background(), "")
	b.Close()
	if err != nil || len(toks) != 1 || toks[0].Tenant != "dev" {
		t.Fatalf("tokens after restart = %+v, %v; want the one development token of the first start", toks, err)
	}
	cancel2()
	if err := <-done2; err != nil {
		t.Fatalf("serve (second start): %v", err)
	}
	if left := dgraphPids(t, dataDir, ""); len(left) != 0 {
		t.Fatalf("dgraph processes left after second shutdown: %v", left)
	}
}

func waitReady(t *testing.T, addr string, want bool, timeout time.Duration, done <-chan error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case err := <-done:
			t.Fatalf("serve exited: %v", err)
		default:
		}
		resp, err := http.Get("http://" + addr + "/readyz")
		if err == nil {
			resp.Body.Close()
			if (resp.StatusCode == http.StatusOK) == want {
				return
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("/readyz never became ready=%v within %s", want, timeout)
}

// dgraphPids finds dgraph processes whose command line names dataDir (and
// role, e.g. "alpha", when given).
func dgraphPids(t *testing.T, dataDir, role string) []int {
	t.Helper()
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil {
			continue
		}
		args := strings.Split(string(raw), "\x00")
		if len(args) < 2 || filepath.Base(args[0]) != "dgraph" || !strings.Contains(string(raw), dataDir) {
			continue
		}
		if stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && strings.Contains(string(stat), ") Z ") {
			continue // a zombie is already dead
		}
		if role == "" || args[1] == role {
			pids = append(pids, pid)
		}
	}
	return pids
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// freeOffset finds a Dgraph port offset whose five ports are free.
func freeOffset(t *testing.T) int {
	t.Helper()
	for o := 2000 + int(time.Now().UnixNano()%15000); o < 40000; o += 11 {
		free := true
		for _, base := range []int{5080, 6080, 7080, 8080, 9080} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", base+o))
			if err != nil {
				free = false
				break
			}
			l.Close()
		}
		if free {
			return o
		}
	}
	t.Fatal("no free port offset")
	return 0
}

// `make run` as a newcomer types it: the default data dir is relative
// (./data). The managed children run in their own working directory, so every
// path handed to them must have been made absolute. Here the data dir is
// relative, holds a space, and the binary is named relative to a working
// directory that is not the repository.
func TestServeRelativeDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a managed Dgraph")
	}
	bin, err := localdgraph.FindBinary()
	if err != nil {
		t.Skip(err)
	}
	bin, _ = filepath.Abs(bin)
	wd := t.TempDir()
	t.Chdir(wd)
	relBin, err := filepath.Rel(wd, bin)
	if err != nil {
		t.Fatal(err)
	}
	offset, addr := freeOffset(t), freeAddr(t)
	args := []string{"--data-dir", "my data", "--dgraph-bin", relBin, "--addr", addr,
		"--dgraph-port-offset", strconv.Itoa(offset), "--log-level", "warn"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- runServe(ctx, args) }()
	waitReady(t, addr, true, 2*time.Minute, done)
	abs := filepath.Join(wd, "my data")
	if _, err := os.Stat(filepath.Join(abs, "secrets", "dev-token")); err != nil {
		t.Fatalf("dev token under the relative data dir: %v", err)
	}
	if pids := dgraphPids(t, abs, "alpha"); len(pids) != 1 {
		t.Fatalf("alpha processes naming %q: %v", abs, pids)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if left := dgraphPids(t, abs, ""); len(left) != 0 {
		t.Fatalf("dgraph processes left: %v", left)
	}
}

// Ready while a majority of alphas answer: one of three down still serves (failover), two of
// three or the only one down does not.
func TestAlphaQuorum(t *testing.T) {
	down := errors.New("unreachable")
	for _, c := range []struct {
		pings map[string]error
		want  bool
	}{
		{map[string]error{"a": nil}, true},
		{map[string]error{"a": down}, false},
		{map[string]error{"a": nil, "b": down, "c": nil}, true},
		{map[string]error{"a": down, "b": down, "c": nil}, false},
		{map[string]error{"a": nil, "b": down}, false},
		{map[string]error{}, false},
	} {
		ok, detail := alphaQuorum(c.pings)
		if ok != c.want || len(detail) != len(c.pings) {
			t.Errorf("%v: ready %v (detail %v), want %v", c.pings, ok, detail, c.want)
		}
		for a, err := range c.pings {
			if want := map[bool]string{true: "ok", false: "unreachable"}[err == nil]; detail["alpha "+a] != want {
				t.Errorf("%v: detail[%s] = %q, want %q", c.pings, a, detail["alpha "+a], want)
			}
		}
	}
}
