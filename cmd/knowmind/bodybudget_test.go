package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
)

// Issue 34 item 5: refused requests must not cost memory without bound. 40
// concurrent store_memory calls of 15 MB (over the body cap: refused by their
// Content-Length before a byte is read) and of the largest body the cap
// lets through (a content of too many characters: read, decoded and refused
// as too_large under the shared body budget), from one token and from 8
// tokens of 8 tenants, against `knowmind serve` as a process. The service's
// resident memory may grow by at most 300 MB over its idle size. README
// "Limits" quotes the figures this prints.
func TestBodyBudgetBoundsServiceMemory(t *testing.T) {
	env := sharedDgraph(t)
	addr := freeAddr(t)
	cmd := exec.Command(os.Args[0], "serve", "--addr", addr, "--warm-text-stats=false")
	cmd.Env = childEnv(t, env)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	waitReady(t, addr, true, 2*time.Minute, nil)
	url := "http://" + addr + "/api/mcp/v1"
	ctx := context.Background()

	var tokens []string
	for i := range 8 {
		tok, _, err := env.Client.CreateToken(ctx, fmt.Sprintf("budget%d", i), []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}, "test", nil)
		if err != nil {
			t.Fatal(err)
		}
		tokens = append(tokens, tok)
	}
	// Warm up: one ordinary call per token opens its tenant.
	for _, tok := range tokens {
		if status, _, body := postMCP(t, url, tok, storeBody("warm-up")); status != http.StatusOK {
			t.Fatalf("warm-up: HTTP %d %s", status, body)
		}
	}
	idle := readRSS(cmd.Process.Pid, "VmRSS")
	if idle == 0 {
		t.Skip("no /proc/PID/status to read the service's memory from")
	}

	capSized := storeBody(strings.Repeat("a", largestBodyForTest-200)) // just under the cap
	overCap := storeBody(strings.Repeat("a", 15_000_000))
	for _, round := range []struct {
		name   string
		body   string
		tokens []string
	}{
		{"15 MB, one token", overCap, tokens[:1]},
		{"15 MB, 8 tokens", overCap, tokens},
		{"cap-sized, one token", capSized, tokens[:1]},
		{"cap-sized, 8 tokens", capSized, tokens},
	} {
		resetPeakRSS(cmd.Process.Pid)
		peak := samplePeakRSS(cmd.Process.Pid)
		statuses := fire(t, url, round.tokens, round.body, 40)
		growth := (peak() - idle) >> 20
		t.Logf("%s: 40 concurrent calls of %.1f MB: %v; service RSS idle %d MB, peak growth %d MB",
			round.name, float64(len(round.body))/1e6, statuses, idle>>20, growth)
		if growth >= 300 {
			t.Errorf("%s: service RSS grew by %d MB, want < 300 MB", round.name, growth)
		}
		if statuses[http.StatusOK] > 0 && round.body == overCap {
			t.Errorf("%s: %d calls over the cap were read", round.name, statuses[http.StatusOK])
		}
	}
	if status, _, body := postMCP(t, url, tokens[0], storeBody("after the flood")); status != http.StatusOK || !strings.Contains(body, `"chunks_written"`) {
		t.Errorf("an ordinary call after the flood: HTTP %d %s", status, body)
	}
}

// largestBodyForTest is the MCP endpoint's default body cap
// (handlers.largestLegalBody).
const largestBodyForTest = 12*knowmind.MaxContentChars + 1<<20

func storeBody(content string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_store_memory","arguments":{"title":"budget","content":"` +
		content + `"}}}`
}

// fire sends n copies of body at once, spread over tokens, and counts the
// HTTP statuses.
func fire(t *testing.T, url string, tokens []string, body string, n int) map[int]int {
	t.Helper()
	payload := []byte(body)
	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(payload))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json")
			req.Header.Set("Authorization", "Bearer "+tokens[i%len(tokens)])
			status := -1
			if resp, err := http.DefaultClient.Do(req); err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return statuses
}

// resetPeakRSS resets VmHWM to the current RSS (Linux 4.0+; ignored elsewhere).
func resetPeakRSS(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// samplePeakRSS samples VmRSS every few milliseconds from now on; the
// function it returns stops sampling and gives the highest of the samples
// and of VmHWM.
func samplePeakRSS(pid int) func() int64 {
	stop := make(chan struct{})
	done := make(chan int64)
	go func() {
		var peak int64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			if v := readRSS(pid, "VmRSS"); v > peak {
				peak = v
			}
			select {
			case <-stop:
				done <- max(peak, readRSS(pid, "VmHWM"))
				return
			case <-tick.C:
			}
		}
	}()
	return func() int64 { close(stop); return <-done }
}

// readRSS reads a field of /proc/PID/status (VmRSS, VmHWM) in bytes; 0 if it cannot.
func readRSS(pid int, field string) int64 {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	return 0
}
