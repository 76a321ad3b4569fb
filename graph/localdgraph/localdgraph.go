// Package localdgraph starts and supervises Dgraph processes on loopback:
// one zero and one or more alphas, as children of the calling process.
//
// It is what `knowmind serve` uses when no Dgraph address is configured and
// what the test harness (graph/dgraphtest) uses for throwaway clusters. It
// knows how to run the dgraph binary and nothing about knowmind's schema.
package localdgraph

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Dgraph's base ports; every process adds its own port offset.
const (
	zeroGRPC  = 5080
	zeroHTTP  = 6080
	alphaInt  = 7080
	alphaHTTP = 8080
	alphaGRPC = 9080
)

// DefaultPortOffset is used by `knowmind serve` for its managed Dgraph, so it
// does not collide with a Dgraph the user runs on the standard ports:
// zero 5180/6180, alpha 7180/8180/9180.
const DefaultPortOffset = 100

// ErrBinaryMissing is returned when no dgraph binary can be found.
var ErrBinaryMissing = errors.New("dgraph binary not found: run `make dgraph` (builds Dgraph v25.2.0 from the Go module proxy into ./bin/dgraph), " +
	"or pass --dgraph-bin / set KNOWMIND_DGRAPH_BIN, or pass --dgraph host:9080 to use an existing cluster")

// Config describes the local cluster to run.
type Config struct {
	Binary  string // path to dgraph; "" = FindBinary()
	DataDir string // all state lives below it: zero/, alpha1/, ... and logs/
	// PortOffset for zero and the first alpha; alpha i gets PortOffset+i-1...
	// -1 picks free ports.
	PortOffset int
	Alphas     int // default 1
	Replicas   int // default 1
	// ACLSecretFile turns ACL (and with it namespaces) on.
	ACLSecretFile string
	// EncryptionKeyFile turns encryption at rest on: the alphas' postings,
	// write-ahead log and temporary files are encrypted with this AES key of
	// 16, 32 or 64 bytes (PrepareEncryption makes one). "" = unencrypted.
	EncryptionKeyFile string
	// CacheMB bounds alpha's caches (unbounded, an alpha grew past 13 GB: docs/dgraph-notes.md).
	CacheMB int
	// CacheRemoveOnUpdate drops a cached posting list when a commit changes it instead of
	// patching it (Dgraph's remove-on-update): under HNSW writes the patched entries kept
	// growing past size-mb (docs/dgraph-notes.md, "Memory and restarts under vector ingest").
	CacheRemoveOnUpdate bool
	// MemLimitMB, when above 0, is the alphas' Go soft memory limit (GOMEMLIMIT): their garbage
	// collector works harder as the heap nears it instead of letting it double (0 = Go's default,
	// none).
	MemLimitMB int
	// GCPercent, when above 0, is the alphas' GOGC: the heap may grow to (1 + GCPercent/100)
	// times the live heap before a collection (0 = Go's default, 100).
	GCPercent int
	Logger    *slog.Logger
	// GracePeriod before SIGKILL on stop (v25.0.0's zero hangs on SIGTERM).
	GracePeriod time.Duration
	// CrashLoopExits exits of one child within CrashLoopWindow make a crash loop: the child is
	// no longer restarted and CrashLoop says why (defaults 5 and 10 minutes). A transaction
	// Dgraph cannot apply is replayed from the write-ahead log on every start, so restarting
	// it only repeats the crash (docs/dgraph-notes.md, "Recovering from a crash loop").
	CrashLoopExits  int
	CrashLoopWindow time.Duration
}

// Cluster is a running local Dgraph.
type Cluster struct {
	cfg    Config
	log    *slog.Logger
	zero   *proc
	alphas []*proc
	offset int // port offset of zero and the first alpha

	mu       sync.Mutex
	stopping bool
	wg       sync.WaitGroup
}

// proc is one supervised child process.
type proc struct {
	name     string
	args     []string
	httpAddr string
	grpcAddr string
	logPath  string
	logStart int64 // size of the log when the current run began

	mu      sync.Mutex
	cmd     *exec.Cmd
	exited  chan struct{}
	healthy bool
	stopped bool // set on Stop: the child is not restarted
	starts  int
	exits   []time.Time // unexpected exits within the crash-loop window
	// crashLoop, once set, says why the child is no longer restarted.
	crashLoop string
}

// FindBinary looks for dgraph: $KNOWMIND_DGRAPH_BIN, ./bin/dgraph, bin/dgraph
// next to the running executable, then $PATH.
func FindBinary() (string, error) {
	candidates := []string{os.Getenv("KNOWMIND_DGRAPH_BIN"), "bin/dgraph"}
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "dgraph"), filepath.Join(filepath.Dir(exe), "..", "bin", "dgraph"))
	}
	// Tests run in package directories: walk up to find the repository's bin/.
	if wd, err := os.Getwd(); err == nil {
		for d := wd; ; d = filepath.Dir(d) {
			candidates = append(candidates, filepath.Join(d, "bin", "dgraph"))
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	for _, c := range candidates {
		if c == "" {
			continue
		}
		if st, err := os.Stat(c); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return filepath.Abs(c)
		}
	}
	if p, err := exec.LookPath("dgraph"); err == nil {
		return p, nil
	}
	return "", ErrBinaryMissing
}

// Start launches zero and the alphas and waits until all are healthy.
// Children are supervised: one that dies is restarted with backoff.
func Start(ctx context.Context, cfg Config) (*Cluster, error) {
	if cfg.Binary == "" {
		b, err := FindBinary()
		if err != nil {
			return nil, err
		}
		cfg.Binary = b
	} else if _, err := os.Stat(cfg.Binary); err != nil {
		return nil, fmt.Errorf("%w (looked at %s)", ErrBinaryMissing, cfg.Binary)
	}
	if cfg.Alphas <= 0 {
		cfg.Alphas = 1
	}
	if cfg.Replicas <= 0 {
		cfg.Replicas = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = 10 * time.Second
	}
	if cfg.CacheMB <= 0 {
		cfg.CacheMB = 256
	}
	if cfg.CrashLoopExits <= 0 {
		cfg.CrashLoopExits = 5
	}
	if cfg.CrashLoopWindow <= 0 {
		cfg.CrashLoopWindow = 10 * time.Minute
	}
	// The children run in DataDir: every path they are handed must be
	// absolute, whatever the caller's working directory was.
	for _, p := range []*string{&cfg.DataDir, &cfg.Binary, &cfg.ACLSecretFile, &cfg.EncryptionKeyFile} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, err
		}
		*p = abs
	}
	dataDir := cfg.DataDir
	// The logs can hold stored content (a panicking alpha prints the key it refused, which is
	// user text, outside the encryption at rest): only the owner reads them, also in a data
	// dir made before this mode was set.
	logDir := filepath.Join(dataDir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	if err := os.Chmod(logDir, 0o700); err != nil {
		return nil, fmt.Errorf("restrict log dir: %w", err)
	}

	offsets, err := pickOffsets(cfg.PortOffset, cfg.Alphas)
	if err != nil {
		return nil, err
	}
	c := &Cluster{cfg: cfg, log: cfg.Logger, offset: offsets[0]}
	telemetry := "reports=false;sentry=false;"
	cache := cacheFlag(cfg)
	zo := offsets[0]
	zeroAddr := "127.0.0.1:" + strconv.Itoa(zeroGRPC+zo)
	c.zero = &proc{
		name: "zero",
		args: []string{"zero",
			"--my", zeroAddr,
			"--port_offset", strconv.Itoa(zo),
			"--bindall=false",
			"--replicas", strconv.Itoa(cfg.Replicas),
			"--raft", "idx=1",
			"--wal", filepath.Join(dataDir, "zero", "zw"),
			"--telemetry", telemetry,
		},
		httpAddr: "127.0.0.1:" + strconv.Itoa(zeroHTTP+zo),
		grpcAddr: zeroAddr,
		logPath:  filepath.Join(dataDir, "logs", "zero.log"),
	}
	for i := 0; i < cfg.Alphas; i++ {
		o := offsets[i]
		name := "alpha" + strconv.Itoa(i+1)
		dir := filepath.Join(dataDir, name)
		args := []string{"alpha",
			"--my", "127.0.0.1:" + strconv.Itoa(alphaInt+o),
			"--zero", zeroAddr,
			"--port_offset", strconv.Itoa(o),
			"--bindall=false",
			"-p", filepath.Join(dir, "p"),
			"-w", filepath.Join(dir, "w"),
			"--tmp", filepath.Join(dir, "t"),
			"--raft", "idx=" + strconv.Itoa(i+1),
			"--security", "whitelist=127.0.0.1",
			"--cache", cache,
			"--telemetry", telemetry,
		}
		if cfg.ACLSecretFile != "" {
			args = append(args, "--acl", "secret-file="+cfg.ACLSecretFile+"; access-ttl=6h; refresh-ttl=30d;")
		}
		if cfg.EncryptionKeyFile != "" {
			args = append(args, "--encryption", "key-file="+cfg.EncryptionKeyFile)
		}
		c.alphas = append(c.alphas, &proc{
			name:     name,
			args:     args,
			httpAddr: "127.0.0.1:" + strconv.Itoa(alphaHTTP+o),
			grpcAddr: "127.0.0.1:" + strconv.Itoa(alphaGRPC+o),
			logPath:  filepath.Join(dataDir, "logs", name+".log"),
		})
	}

	if err := c.launch(c.zero); err != nil {
		return nil, err
	}
	if err := c.waitHealthy(ctx, c.zero, 60*time.Second); err != nil {
		c.Stop()
		return nil, err
	}
	for _, a := range c.alphas {
		if err := c.launch(a); err != nil {
			c.Stop()
			return nil, err
		}
	}
	for _, a := range c.alphas {
		if err := c.waitHealthy(ctx, a, 120*time.Second); err != nil {
			c.Stop()
			return nil, err
		}
	}
	return c, nil
}

// cacheFlag is the alphas' --cache superflag.
func cacheFlag(cfg Config) string {
	cache := "size-mb=" + strconv.Itoa(cfg.CacheMB)
	if cfg.CacheRemoveOnUpdate {
		cache += "; remove-on-update=true"
	}
	return cache
}

// alphaEnv is the alphas' environment: env with the Go runtime's memory settings of cfg.
func alphaEnv(env []string, cfg Config) []string {
	if cfg.MemLimitMB <= 0 && cfg.GCPercent <= 0 {
		return nil // the parent's
	}
	env = slices.Clone(env)
	if cfg.MemLimitMB > 0 {
		env = append(env, "GOMEMLIMIT="+strconv.Itoa(cfg.MemLimitMB)+"MiB")
	}
	if cfg.GCPercent > 0 {
		env = append(env, "GOGC="+strconv.Itoa(cfg.GCPercent))
	}
	return env
}

// PortOffset is the port offset the cluster runs at (zero's and the first alpha's; the one picked
// when Config.PortOffset was -1): a restart on the same data dir must use it again, since zero
// remembers the alphas' addresses.
func (c *Cluster) PortOffset() int { return c.offset }

// AlphaGRPC returns the gRPC addresses of the alphas ("127.0.0.1:9180", ...).
func (c *Cluster) AlphaGRPC() []string {
	out := make([]string, len(c.alphas))
	for i, a := range c.alphas {
		out[i] = a.grpcAddr
	}
	return out
}

// AlphaHTTP returns the HTTP addresses of the alphas.
func (c *Cluster) AlphaHTTP() []string {
	out := make([]string, len(c.alphas))
	for i, a := range c.alphas {
		out[i] = a.httpAddr
	}
	return out
}

// Healthy reports whether every child is running and passed its health check.
func (c *Cluster) Healthy() bool {
	for _, p := range append([]*proc{c.zero}, c.alphas...) {
		p.mu.Lock()
		h := p.healthy
		p.mu.Unlock()
		if !h {
			return false
		}
	}
	return true
}

// Pid returns the current process id of a child ("zero", "alpha1", ...), or 0.
func (c *Cluster) Pid(name string) int {
	for _, p := range append([]*proc{c.zero}, c.alphas...) {
		if p.name == name {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.cmd != nil && p.cmd.Process != nil {
				return p.cmd.Process.Pid
			}
		}
	}
	return 0
}

// Kill sends SIGKILL to a child, as a crash would; the supervisor restarts it.
// For tests and the failover bench.
func (c *Cluster) Kill(name string) error {
	pid := c.Pid(name)
	if pid == 0 {
		return fmt.Errorf("no running child %q", name)
	}
	return syscall.Kill(pid, syscall.SIGKILL)
}

// Stop terminates the alphas, then zero: SIGTERM, then SIGKILL after the
// grace period. It waits until every child has exited.
func (c *Cluster) Stop() {
	c.mu.Lock()
	if c.stopping {
		c.mu.Unlock()
		c.wg.Wait()
		return
	}
	c.stopping = true
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, a := range c.alphas {
		wg.Add(1)
		go func(p *proc) { defer wg.Done(); c.terminate(p) }(a)
	}
	wg.Wait()
	if c.zero != nil {
		c.terminate(c.zero)
	}
	c.wg.Wait()
}

func (c *Cluster) terminate(p *proc) {
	p.mu.Lock()
	p.stopped = true
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(c.cfg.GracePeriod):
		c.log.Warn("dgraph child did not stop in time, killing", "child", p.name)
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	}
}

func (c *Cluster) launch(p *proc) error {
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("open %s log: %w", p.name, err)
	}
	var logStart int64
	if st, err := logf.Stat(); err == nil {
		logStart = st.Size()
	}
	cmd := exec.Command(c.cfg.Binary, p.args...)
	cmd.Dir = c.cfg.DataDir
	if strings.HasPrefix(p.name, "alpha") {
		cmd.Env = alphaEnv(os.Environ(), c.cfg)
	}
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Own process group (a Ctrl-C to the terminal reaches only us, so we
	// control the order of shutdown) and SIGKILL if we die: no orphans.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("start dgraph %s: %w", p.name, err)
	}
	exited := make(chan struct{})
	p.mu.Lock()
	p.cmd, p.exited, p.healthy, p.logStart = cmd, exited, false, logStart
	p.starts++
	p.mu.Unlock()
	c.log.Info("dgraph child started", "child", p.name, "pid", cmd.Process.Pid, "log", p.logPath)
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		err := cmd.Wait()
		logf.Close()
		close(exited)
		c.childExited(p, err)
	}()
	return nil
}

// childExited restarts a child that died on its own, with exponential backoff,
// and marks it unhealthy until it answers its health check again.
func (c *Cluster) childExited(p *proc, err error) {
	p.mu.Lock()
	p.healthy = false
	stopped := p.stopped
	p.mu.Unlock()
	c.mu.Lock()
	stopping := c.stopping
	c.mu.Unlock()
	if stopped || stopping {
		return
	}
	if reason := c.noteExit(p); reason != "" {
		c.log.Error("dgraph child is crash-looping; not restarting it", "child", p.name, "reason", reason,
			"what_to_do", "stop knowmind, follow docs/dgraph-notes.md \"Recovering from a crash loop\", start knowmind again",
			"log", p.logPath)
		return
	}
	c.log.Error("dgraph child exited unexpectedly; restarting", "child", p.name, "err", err)
	backoff := 500 * time.Millisecond
	for attempt := 1; ; attempt++ {
		time.Sleep(backoff)
		c.mu.Lock()
		stopping = c.stopping
		c.mu.Unlock()
		if stopping {
			return
		}
		if err := c.launch(p); err != nil {
			c.log.Error("restart failed", "child", p.name, "attempt", attempt, "err", err)
			backoff = min(backoff*2, 30*time.Second)
			continue
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		herr := c.waitHealthy(ctx, p, 2*time.Minute)
		cancel()
		if herr != nil {
			c.log.Error("restarted child not healthy", "child", p.name, "err", herr)
		}
		return
	}
}

// noteExit records an unexpected exit of p and returns, when it makes a crash loop, the
// reason (also kept for CrashLoop).
func (c *Cluster) noteExit(p *proc) string {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	kept := p.exits[:0]
	for _, t := range p.exits {
		if now.Sub(t) < c.cfg.CrashLoopWindow {
			kept = append(kept, t)
		}
	}
	p.exits = append(kept, now)
	if len(p.exits) < c.cfg.CrashLoopExits {
		return ""
	}
	p.crashLoop = fmt.Sprintf("dgraph %s exited %d times within %s and is no longer restarted", p.name, len(p.exits), c.cfg.CrashLoopWindow)
	if logHas(p.logPath, p.logStart, keyLimitPanic) {
		p.crashLoop += "; its log shows a committed write with an index key over Dgraph's 65,000-byte limit, replayed on every start"
	}
	p.crashLoop += "; see " + p.logPath + " and docs/dgraph-notes.md \"Recovering from a crash loop\""
	return p.crashLoop
}

// keyLimitPanic is what Badger says when a committed transaction holds a key over its limit.
const keyLimitPanic = "exceeded 65000 limit"

// logHas reports whether the log from offset on (its last MiB at most) contains s.
func logHas(path string, offset int64, s string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		offset = max(offset, st.Size()-1<<20)
	}
	b, err := io.ReadAll(io.NewSectionReader(f, offset, 1<<20))
	return err == nil && strings.Contains(string(b), s)
}

// CrashLoop returns, for the first child that crash-loops, why it is no longer restarted and
// what to read; "" while none does.
func (c *Cluster) CrashLoop() string {
	for _, p := range append([]*proc{c.zero}, c.alphas...) {
		p.mu.Lock()
		reason := p.crashLoop
		p.mu.Unlock()
		if reason != "" {
			return reason
		}
	}
	return ""
}

// waitHealthy polls the child's /health until it answers 200.
func (c *Cluster) waitHealthy(ctx context.Context, p *proc, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := &http.Client{Timeout: 2 * time.Second}
	for time.Now().Before(deadline) {
		p.mu.Lock()
		exited := p.exited
		p.mu.Unlock()
		select {
		case <-exited:
			return c.startFailure(p)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := client.Get("http://" + p.httpAddr + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				p.mu.Lock()
				p.healthy = true
				p.mu.Unlock()
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("dgraph %s not healthy after %s; see %s", p.name, timeout, p.logPath)
}

// pickOffsets returns one port offset per alpha (zero shares the first).
// A fixed offset is used as given (alphas step by 1); -1 finds offsets whose
// five ports are all free on loopback.
func pickOffsets(fixed, alphas int) ([]int, error) {
	out := make([]int, 0, alphas)
	if fixed >= 0 {
		for i := 0; i < alphas; i++ {
			out = append(out, fixed+i)
		}
		return out, nil
	}
	// Random start so parallel test packages rarely race for the same offset.
	start := 1000 + int(time.Now().UnixNano()%20000)
	for o := start; o < 45000 && len(out) < alphas; o += 7 {
		if allFree(o) {
			out = append(out, o)
		}
	}
	if len(out) < alphas {
		return nil, errors.New("no free loopback ports for dgraph")
	}
	return out, nil
}

func allFree(offset int) bool {
	for _, base := range []int{zeroGRPC, zeroHTTP, alphaInt, alphaHTTP, alphaGRPC} {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(base+offset))
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}
