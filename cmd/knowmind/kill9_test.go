package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/snapshot"
)

// Issue 13, kill -9: a stream of store_memory and upload_document calls runs
// against `knowmind serve` on its managed Dgraph while first the alpha, then
// the whole service (and with it its Dgraph children) is SIGKILLed. After the
// restart every acknowledged write is stored with all its chunks and their
// vectors, and nothing is half-written: a memory marked indexed has exactly
// chunk_count chunks, each with a vector; a failed record has none; no chunk
// hangs without its memory. One round of each kill here;
// `make kill9` (KNOWMIND_KILL9_ROUNDS=5) runs more, with more writers.
func TestKill9(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a managed Dgraph and kills it")
	}
	rounds, writers := 1, 3
	if v, err := strconv.Atoi(os.Getenv("KNOWMIND_KILL9_ROUNDS")); err == nil && v > 0 {
		rounds, writers = v, 6
	}
	start := time.Now()
	dataDir, offset, addr := t.TempDir(), freeOffset(t), freeAddr(t)
	base := "http://" + addr
	srv := startServeProcess(t, dataDir, offset, addr)
	defer func() { srv.stop(t) }()
	tokenBytes, err := os.ReadFile(filepath.Join(dataDir, "secrets", "dev-token"))
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(tokenBytes))
	led := &writeLedger{acked: map[string]ackedWrite{}, answers: map[string]int{}}

	for round := 1; round <= rounds; round++ {
		// The alpha: killed mid-stream, restarted by the service's supervisor;
		// the stream goes on until writes are acknowledged again.
		st := led.stream(base, token, writers, fmt.Sprintf("r%da", round))
		led.waitAcks(t, 8, 2*time.Minute)
		alpha := dgraphPids(t, dataDir, "alpha")
		if len(alpha) != 1 {
			t.Fatalf("alpha processes: %v", alpha)
		}
		if err := syscall.Kill(alpha[0], syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		led.killed()
		led.waitAcks(t, 8, 3*time.Minute)
		st.stop()

		// The service: SIGKILL takes its Dgraph children with it (Pdeathsig).
		st = led.stream(base, token, writers, fmt.Sprintf("r%ds", round))
		led.waitAcks(t, 8, 2*time.Minute)
		srv.kill(t)
		led.killed()
		st.stop()
		deadline := time.Now().Add(30 * time.Second)
		for len(dgraphPids(t, dataDir, "")) > 0 && time.Now().Before(deadline) {
			time.Sleep(100 * time.Millisecond)
		}
		if left := dgraphPids(t, dataDir, ""); len(left) > 0 {
			t.Fatalf("dgraph children outlived the SIGKILLed service: %v", left)
		}
		// An exiting process leaves /proc's cmdline empty before its sockets
		// close: wait until its ports are closed too, or the new service
		// would take the dying Dgraph for a running one.
		for _, port := range []int{5080 + offset, 9080 + offset} {
			for portOpen("127.0.0.1:"+strconv.Itoa(port)) && time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
			}
		}
		srv = startServeProcess(t, dataDir, offset, addr)
	}

	// Index snapshots (data-dir/index): a SIGKILL during a write leaves the old file or the new,
	// never a torn one.
	secret, err := os.ReadFile(filepath.Join(dataDir, "secrets", "service-secret"))
	if err != nil {
		t.Fatal(err)
	}
	snaps, _ := filepath.Glob(filepath.Join(dataDir, "index", "*", "index.snap"))
	for _, path := range snaps {
		if tag, _, err := snapshot.ReadFile(path, graph.SnapshotKey(secret)); err != nil {
			t.Errorf("index snapshot %s after the kills: %v", path, err)
		} else {
			t.Logf("index snapshot of %s: %d memories", tag.Tenant, tag.Memories)
		}
	}

	// After the last restart: read the store directly.
	b, err := openBackend(context.Background(), Config{DataDir: dataDir, DgraphPortOffset: offset, DgraphUser: "groot"}, newLogger("error"), opening{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	cred, err := b.client.NamespaceCredentials(context.Background(), "dev")
	if err != nil {
		t.Fatal(err)
	}
	raw := dgraphtest.Login(t, cred, "127.0.0.1:"+strconv.Itoa(9080+offset))
	resp, err := raw.NewReadOnlyTxn().Query(context.Background(), kill9CheckQuery)
	if err != nil {
		t.Fatal(err)
	}
	var stored struct {
		M []struct {
			ID         string `json:"id"`
			Kind       string `json:"kind"`
			Status     string `json:"status"`
			ChunkCount int    `json:"cc"`
			Chunks     int    `json:"n"`
			Vectors    int    `json:"nv"`
		}
		Orphans []struct{ N int } `json:"orphans"`
	}
	if err := json.Unmarshal(resp.Json, &stored); err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	statuses := map[string]int{}
	halfWritten := 0
	for i, m := range stored.M {
		byID[m.ID] = i
		statuses[m.Status]++
		switch {
		case m.Status == knowmind.StatusIndexed && (m.Chunks == 0 || m.Chunks != m.ChunkCount || m.Vectors != m.Chunks),
			m.Status != knowmind.StatusIndexed && m.Chunks != 0:
			halfWritten++
			t.Errorf("half-written %s %s: status %s, chunk_count %d, chunks %d, with vectors %d", m.Kind, m.ID, m.Status, m.ChunkCount, m.Chunks, m.Vectors)
		}
	}
	missing, chunksAcked := 0, 0
	for id, a := range led.acked {
		chunksAcked += a.chunks
		i, ok := byID[id]
		if !ok {
			missing++
			t.Errorf("acknowledged %s %s is gone", a.kind, id)
			continue
		}
		if m := stored.M[i]; m.Status != knowmind.StatusIndexed || m.Chunks != a.chunks {
			t.Errorf("acknowledged %s %s: status %s with %d chunks, acknowledged with %d", a.kind, id, m.Status, m.Chunks, a.chunks)
		}
	}
	orphans := 0
	if len(stored.Orphans) > 0 {
		orphans = stored.Orphans[0].N
	}
	if orphans > 0 {
		t.Errorf("%d chunks without their memory", orphans)
	}
	kinds := map[string]int{}
	for _, a := range led.acked {
		kinds[a.kind]++
	}
	t.Logf("kill -9: %d rounds (alpha, then service), %d writers, %.0fs: %d calls, %d acknowledged (%d memories, %d documents, %d chunks), "+
		"answers %s; stored %d nodes %v, %d not acknowledged (in flight at a kill, or refused after their commit); "+
		"%d acknowledged missing, %d half-written, %d orphan chunks",
		rounds, writers, time.Since(start).Seconds(), led.calls, len(led.acked), kinds[knowmind.KindMemory], kinds[knowmind.KindDocument], chunksAcked,
		led.answerSummary(), len(stored.M), statuses, len(stored.M)-len(led.acked), missing, halfWritten, orphans)
}

const kill9CheckQuery = `{
  m(func: type(Memory)) {
    id: Memory.id  kind: Memory.kind  status: Memory.status  cc: Memory.chunk_count
    n: count(Memory.chunks)
    nv: count(Memory.chunks @filter(has(Chunk.embedding)))
  }
  orphans(func: type(Chunk)) @filter(NOT has(~Memory.chunks)) { n: count(uid) }
}`

// ackedWrite is a write the service answered with status indexed.
type ackedWrite struct {
	kind   string
	chunks int
}

// writeLedger records what the writers sent and what was acknowledged.
type writeLedger struct {
	mu      sync.Mutex
	calls   int
	acked   map[string]ackedWrite
	answers map[string]int // by outcome: ok, a JSON-RPC error code, "no answer"
	marks   []int          // len(acked) at each kill
}

func (l *writeLedger) killed() {
	l.mu.Lock()
	l.marks = append(l.marks, len(l.acked))
	l.mu.Unlock()
}

// waitAcks waits until n more writes were acknowledged since the last kill
// (or the start).
func (l *writeLedger) waitAcks(t *testing.T, n int, timeout time.Duration) {
	t.Helper()
	l.mu.Lock()
	from := len(l.acked)
	l.mu.Unlock()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		l.mu.Lock()
		got := len(l.acked)
		l.mu.Unlock()
		if got >= from+n {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("fewer than %d writes acknowledged within %s; answers %s", n, timeout, l.answerSummary())
}

func (l *writeLedger) answerSummary() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	keys := make([]string, 0, len(l.answers))
	for k := range l.answers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, l.answers[k])
	}
	return strings.Join(parts, ", ")
}

type writeStream struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

func (s *writeStream) stop() { s.cancel(); s.wg.Wait() }

// stream starts writers that alternate store_memory (1–3 sections) and
// upload_document (3–6 sections, a fresh title each) until stopped.
func (l *writeLedger) stream(base, token string, writers int, tag string) *writeStream {
	ctx, cancel := context.WithCancel(context.Background())
	s := &writeStream{cancel: cancel}
	client := &http.Client{Timeout: 90 * time.Second}
	for w := 0; w < writers; w++ {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for i := 0; ctx.Err() == nil; i++ {
				name, sections := "knowmind_store_memory", 1+i%3
				if i%2 == 1 {
					name, sections = "knowmind_upload_document", 3+i%4
				}
				var content strings.Builder
				for sec := 0; sec < sections; sec++ {
					fmt.Fprintf(&content, "## Part %d of %s-%d-%d\n\nWrite %d of writer %d, section %d: the crash test keeps every acknowledged word.\n\n",
						sec, tag, w, i, i, w, sec)
				}
				args, _ := json.Marshal(map[string]any{"title": fmt.Sprintf("crash %s-%d-%d", tag, w, i), "content": content.String()})
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, i, name, args)
				outcome, id, chunks := callWrite(ctx, client, base, token, body)
				if ctx.Err() != nil && outcome == "no answer" {
					return
				}
				l.mu.Lock()
				l.calls++
				l.answers[outcome]++
				if id != "" {
					kind := knowmind.KindMemory
					if name == "knowmind_upload_document" {
						kind = knowmind.KindDocument
					}
					l.acked[id] = ackedWrite{kind: kind, chunks: chunks}
				}
				l.mu.Unlock()
				if outcome != "ok" {
					time.Sleep(100 * time.Millisecond) // the service is down or restarting
				}
			}
		}()
	}
	return s
}

// callWrite sends one tools/call; an acknowledged write returns its id.
func callWrite(ctx context.Context, client *http.Client, base, token, body string) (outcome, id string, chunks int) {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/mcp", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return "no answer", "", 0
	}
	defer resp.Body.Close()
	var msg struct {
		Result *struct {
			IsError    bool `json:"isError"`
			Structured struct {
				ID            string `json:"id"`
				Status        string `json:"status"`
				ChunksWritten int    `json:"chunks_written"`
			} `json:"structuredContent"`
		}
		Error *struct{ Code int }
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return "no answer", "", 0
	}
	if err := json.Unmarshal(buf.Bytes(), &msg); err != nil {
		return fmt.Sprintf("HTTP %d", resp.StatusCode), "", 0
	}
	switch {
	case msg.Error != nil:
		return strconv.Itoa(msg.Error.Code), "", 0
	case msg.Result == nil || msg.Result.IsError:
		return "tool error", "", 0
	case msg.Result.Structured.Status != knowmind.StatusIndexed:
		return "status " + msg.Result.Structured.Status, "", 0
	}
	return "ok", msg.Result.Structured.ID, msg.Result.Structured.ChunksWritten
}

// serveProcess is `knowmind serve` in managed mode as a child process (the
// test binary, see TestMain), so it can be SIGKILLed.
type serveProcess struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed when the process has exited
	stderr *lockedBuffer
}

func startServeProcess(t *testing.T, dataDir string, offset int, addr string) *serveProcess {
	t.Helper()
	cmd := exec.Command(os.Args[0], "serve", "--data-dir", dataDir, "--addr", addr, "--dgraph-port-offset", strconv.Itoa(offset),
		"--log-level", "warn", "--rate-limit", "10000", "--rate-burst", "10000", "--warm-text-stats=false")
	cmd.Env = append(os.Environ(), "KNOWMIND_TEST_MAIN=1")
	p := &serveProcess{cmd: cmd, exited: make(chan struct{}), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-p.exited:
			t.Fatalf("serve exited: %v\n%s", cmd.ProcessState, p.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve not ready within 3 minutes\n%s", p.stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (p *serveProcess) kill(t *testing.T) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-p.exited
}

func (p *serveProcess) stop(t *testing.T) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
}
