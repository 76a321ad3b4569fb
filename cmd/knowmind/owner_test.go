package main

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Issue 34 item 7 and issue 39: one process runs a data dir's managed
// Dgraph at a time, and the data dir remembers its port offset. A second
// serve, started without --dgraph-port-offset, finds the first one's Dgraph
// by the recorded offset and uses it; when the first serve stops (and its
// Dgraph with it) the second takes the Dgraph over and serves again. A
// different explicit offset is refused with a message naming the recorded one.
func TestSecondServeTakesOverTheDataDir(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a managed Dgraph twice")
	}
	dataDir, offset := t.TempDir(), freeOffset(t)
	addrA, addrB := freeAddr(t), freeAddr(t)
	first := startServeProcess(t, dataDir, offset, addrA)
	defer first.stop(t)
	recorded, err := os.ReadFile(filepath.Join(dataDir, "dgraph", "port-offset"))
	if err != nil || strings.TrimSpace(string(recorded)) != strconv.Itoa(offset) {
		t.Fatalf("recorded port offset %q (%v), want %d", recorded, err, offset)
	}

	wrong := exec.Command(os.Args[0], "serve", "--data-dir", dataDir, "--addr", freeAddr(t), "--dgraph-port-offset", strconv.Itoa(offset+1))
	wrong.Env = append(os.Environ(), "KNOWMIND_TEST_MAIN=1")
	if out, err := wrong.CombinedOutput(); err == nil || !strings.Contains(string(out), fmt.Sprintf("was created with port offset %d", offset)) {
		t.Errorf("serve with another explicit offset: %v\n%s", err, out)
	}

	second := exec.Command(os.Args[0], "serve", "--data-dir", dataDir, "--addr", addrB, "--log-level", "info", "--warm-text-stats=false")
	second.Env = append(os.Environ(), "KNOWMIND_TEST_MAIN=1")
	var stderr lockedBuffer
	second.Stderr = &stderr
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- second.Wait() }()
	defer func() {
		_ = second.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = second.Process.Kill()
		}
	}()
	waitReady(t, addrB, true, 2*time.Minute, exited)
	if alphas := dgraphPids(t, dataDir, "alpha"); len(alphas) != 1 || parentPid(t, alphas[0]) != first.cmd.Process.Pid {
		t.Fatalf("alphas %v, want one, the first serve's child", alphas)
	}
	token, err := os.ReadFile(filepath.Join(dataDir, "secrets", "dev-token"))
	if err != nil {
		t.Fatal(err)
	}
	call := func() (int, string) {
		status, _, body := postMCP(t, "http://"+addrB+"/api/mcp/v1", strings.TrimSpace(string(token)),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_store_memory","arguments":{"title":"takeover","content":"Der zweite Dienst übernimmt."}}}`)
		return status, body
	}
	if status, body := call(); status != http.StatusOK || !strings.Contains(body, "chunks_written") {
		t.Fatalf("second serve before the first stops: HTTP %d %s", status, body)
	}

	first.stop(t)
	waitReady(t, addrB, true, 3*time.Minute, exited)
	var status int
	var body string
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
		if status, body = call(); status == http.StatusOK && strings.Contains(body, "chunks_written") {
			break
		}
	}
	if status != http.StatusOK || !strings.Contains(body, "chunks_written") {
		t.Fatalf("second serve after the first stopped: HTTP %d %s\n%s", status, body, stderr.String())
	}
	if alphas := dgraphPids(t, dataDir, "alpha"); len(alphas) != 1 || parentPid(t, alphas[0]) != second.Process.Pid {
		t.Errorf("alphas %v after the take-over, want one, the second serve's child", alphas)
	}
	if !strings.Contains(stderr.String(), "taken over") {
		t.Errorf("the second serve's log does not say it took the Dgraph over:\n%s", stderr.String())
	}
}

// parentPid reads a process's parent from /proc.
func parentPid(t *testing.T, pid int) int {
	t.Helper()
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ppid ...
	fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
	ppid, _ := strconv.Atoi(fields[1])
	return ppid
}
