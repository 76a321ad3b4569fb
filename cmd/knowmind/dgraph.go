package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/knowmind/knowmind/embed"
	"github.com/knowmind/knowmind/english"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/localdgraph"
	"github.com/knowmind/knowmind/search"
	"github.com/knowmind/knowmind/shapes"
)

// backend is what a command opened from Config: the graph client, the embedder and the
// cross-encoder if it asked for them, and in managed mode the local Dgraph this process started
// (nil when it uses an external or already running one). Close releases all of it.
type backend struct {
	client   *graph.Client
	shapes   *shapes.Set
	embedder embed.Embedder      // nil unless opening.embedder
	reranker *embed.CrossEncoder // nil unless opening.reranker and --reranker-dir

	mu      sync.Mutex
	cluster *localdgraph.Cluster // the managed Dgraph this process runs; read through managed()
	owner   *localdgraph.Owner   // the data dir's lock, held while this process runs its Dgraph
	// stopTakeOver ends the wait to take the data dir's Dgraph over (takeOver).
	stopTakeOver context.CancelFunc
	takeOverDone chan struct{}
}

// managed is the managed Dgraph this process runs, nil when it uses an external one or one
// another process runs.
func (b *backend) managed() *localdgraph.Cluster {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cluster
}

func (b *backend) Close() {
	if b.stopTakeOver != nil {
		b.stopTakeOver()
		<-b.takeOverDone
	}
	if b.client != nil {
		b.client.Close()
	}
	if c := b.managed(); c != nil {
		c.Stop()
	}
	b.owner.Release()
	if b.reranker != nil {
		b.reranker.Close()
	}
	if b.embedder != nil {
		b.embedder.Close()
	}
}

// bulkRPCTimeout is the least deadline of a round trip to Dgraph in a bulk load.
const bulkRPCTimeout = 10 * time.Minute

// opening says what a command needs besides Dgraph.
type opening struct {
	// embedder: the configured embedder, for commands that write or search vectors (serve,
	// stdio, import, reembed). Tenants whose vectors came from another embedder are refused
	// unless anyEmbedder.
	embedder bool
	// reranker: the cross-encoder of --reranker-dir, when set (serve, stdio).
	reranker bool
	// wordLevels: the English word levels recall compares a question's words by (serve, stdio:
	// the commands that recall; import and reembed would only hold them).
	wordLevels bool
	// anyEmbedder opens tenants whatever embedder wrote them (reembed is about to fix them).
	// Commands without an embedder (tokens, tenants, projects, trash, export) open any anyway.
	anyEmbedder bool
	// noExactVectors: hold no copy of the vectors even with --exact-vectors (import: a running
	// service loads them itself).
	noExactVectors bool
	// takeOver: when another process runs the data dir's managed Dgraph, use it, and start it
	// here once that process ends (the long-running commands serve and stdio, which would
	// otherwise be left without a Dgraph).
	takeOver bool
	// observeRPC is told of every Dgraph round trip (serve's metrics).
	observeRPC func(method string, d time.Duration, err error)
	// snapshots: tenants' derived indexes are read from and written to --index-dir (the
	// long-running commands serve and stdio); observeSnapshot is told how each opened.
	snapshots       bool
	observeSnapshot func(result string)
	// watchIndexBuilds: look after background builds of the vector index (graph.Config; the
	// long-running commands serve and stdio).
	watchIndexBuilds bool
	// bulk: a managed Dgraph this command starts runs in bulk-load mode (import): its cache
	// drops the posting lists a commit changes instead of patching them, which otherwise
	// held most of the alpha's heap during a 100k load (docs/dgraph-notes.md). A Dgraph that
	// is already running (serve's) keeps its settings.
	bulk bool
}

// openBackend opens what a command needs: the embedder and the cross-encoder if asked, then
// Dgraph: the configured external cluster, or the managed local one under data-dir (started
// here unless this data dir's Dgraph is already running, e.g. for `knowmind token` beside
// `serve`).
func openBackend(ctx context.Context, cfg Config, log *slog.Logger, o opening) (_ *backend, err error) {
	set, err := shapes.Load(cfg.ShapesDir)
	if err != nil {
		return nil, err
	}
	b := &backend{shapes: set}
	defer func() {
		if err != nil {
			b.Close()
		}
	}()
	if o.embedder {
		if b.embedder, err = newEmbedder(cfg); err != nil {
			return nil, err
		}
		log.Info("embedder", "id", b.embedder.ID(), "provider", b.embedder.Provider(), "dim", b.embedder.Dim())
	}
	var rr search.Reranker
	if o.reranker && cfg.RerankerDir != "" {
		if b.reranker, err = embed.NewCrossEncoder(cfg.RerankerDir); err != nil {
			return nil, err
		}
		rr = b.reranker
		log.Info("reranker", "name", b.reranker.Name())
	}
	var levels *english.Levels
	if o.wordLevels {
		levels = systemWordLevels(log)
	}
	secretsDir := filepath.Join(cfg.DataDir, "secrets")
	secret := []byte(cfg.Secret)
	if len(secret) == 0 {
		s, err := readOrCreateSecret(filepath.Join(secretsDir, "service-secret"))
		if err != nil {
			return nil, err
		}
		secret = s
	}
	gcfg := graph.Config{
		Alphas: cfg.Dgraph, AlphasHTTP: cfg.DgraphHTTP,
		User: cfg.DgraphUser, Password: cfg.DgraphPassword,
		Secret: secret, Relations: set.Names(), Shapes: set, Logger: log,
		Reranker: rr, NoExactVectors: !cfg.ExactVectors || o.noExactVectors,
		ObserveRPC: o.observeRPC, WatchIndexBuilds: o.watchIndexBuilds,
		RPCTimeout: cfg.DgraphTimeout,
	}
	if levels.Len() > 0 {
		gcfg.WordLevels = levels
	}
	if o.snapshots && cfg.IndexDir != "none" {
		gcfg.IndexDir, gcfg.ObserveSnapshotLoad = cfg.IndexDir, o.observeSnapshot
	}
	if o.snapshots {
		gcfg.IndexMemoryBytes = int64(cfg.IndexMemoryMB) << 20
	}
	if o.bulk && cfg.DgraphTimeout > 0 {
		// An import's commit of --batch memories with their vectors can take
		// minutes (docs/dgraph-notes.md); nobody waits on it interactively.
		gcfg.RPCTimeout = max(cfg.DgraphTimeout, bulkRPCTimeout)
	}
	if b.embedder != nil {
		gcfg.Embedder = b.embedder
	}
	if len(cfg.Dgraph) > 0 {
		if b.client, err = graph.Open(ctx, gcfg); err != nil {
			return nil, err
		}
		return b, b.checkTenants(ctx, o)
	}

	// Managed mode.
	aclSecret := filepath.Join(secretsDir, "acl-secret")
	if _, err := readOrCreateSecret(aclSecret); err != nil {
		return nil, err
	}
	dgraphDir := filepath.Join(cfg.DataDir, "dgraph")
	if cfg.DgraphPortOffset, err = localdgraph.PortOffset(dgraphDir, cfg.DgraphPortOffset, cfg.DgraphPortOffsetSet); err != nil {
		return nil, err
	}
	alpha := "127.0.0.1:" + strconv.Itoa(9080+cfg.DgraphPortOffset)
	alphaHTTP := "127.0.0.1:" + strconv.Itoa(8080+cfg.DgraphPortOffset)
	owner, err := localdgraph.Own(dgraphDir, commandName())
	var owned *localdgraph.OwnedError
	switch {
	case err == nil:
		b.owner = owner
		if err := localdgraph.RecordPortOffset(dgraphDir, cfg.DgraphPortOffset); err != nil {
			return nil, err
		}
		// A Dgraph on these ports that no knowmind process owns (started by hand) is used
		// as it is.
		if !portOpen(alpha) {
			if b.cluster, err = startManaged(ctx, cfg, dgraphDir, aclSecret, secretsDir, log, o); err != nil {
				return nil, err
			}
		}
	case errors.As(err, &owned):
		log.Info("managed Dgraph: using the one another process runs", "data_dir", cfg.DataDir, "pid", owned.PID, "command", owned.Command)
		if err := waitPortOpen(ctx, alpha, 2*time.Minute); err != nil {
			return nil, fmt.Errorf("%w, and it did not answer on %s: %v", owned, alpha, err)
		}
		if o.takeOver {
			b.takeOver(cfg, dgraphDir, aclSecret, secretsDir, alpha, log, o)
		}
	default:
		return nil, err
	}
	gcfg.Alphas, gcfg.AlphasHTTP = []string{alpha}, []string{alphaHTTP}
	gcfg.User = "groot"
	if b.client, err = openManaged(ctx, gcfg, secretsDir, log); err != nil {
		return nil, err
	}
	return b, b.checkTenants(ctx, o)
}

// startManaged starts the data dir's managed Dgraph (its lock held).
func startManaged(ctx context.Context, cfg Config, dgraphDir, aclSecret, secretsDir string, log *slog.Logger, o opening) (*localdgraph.Cluster, error) {
	keyFile, legacy, err := localdgraph.PrepareEncryption(dgraphDir, cmp.Or(cfg.EncryptKeyFile, filepath.Join(secretsDir, "encryption-key")))
	if err != nil {
		return nil, err
	}
	if legacy {
		log.Warn("managed Dgraph: this data dir was made before encryption at rest and stays unencrypted; README \"Encryption at rest\" says how to move it to an encrypted one", "dir", dgraphDir)
	}
	return localdgraph.Start(ctx, managedConfig(cfg, dgraphDir, aclSecret, keyFile, log, o))
}

// takeOver waits in the background for the process that runs the data dir's Dgraph to end,
// then starts it here: its Dgraph stops with it, and this process would otherwise answer 503
// for good. The client reconnects by itself; calls meanwhile get 503.
func (b *backend) takeOver(cfg Config, dgraphDir, aclSecret, secretsDir, alpha string, log *slog.Logger, o opening) {
	zero := "127.0.0.1:" + strconv.Itoa(5080+cfg.DgraphPortOffset)
	ctx, cancel := context.WithCancel(context.Background())
	b.stopTakeOver, b.takeOverDone = cancel, make(chan struct{})
	go func() {
		defer close(b.takeOverDone)
		owner, err := localdgraph.WaitOwn(ctx, dgraphDir, commandName(), 500*time.Millisecond)
		if err != nil {
			return // closing
		}
		// The former owner stops its Dgraph before it lets go of the lock, unless it was
		// killed: then its children are dying with it (PDEATHSIG) and free the ports soon.
		for deadline := time.Now().Add(time.Minute); (portOpen(alpha) || portOpen(zero)) && time.Now().Before(deadline); {
			select {
			case <-ctx.Done():
				owner.Release()
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
		log.Warn("managed Dgraph: the process that ran it has ended; starting it here", "data_dir", cfg.DataDir)
		c, err := startManaged(ctx, cfg, dgraphDir, aclSecret, secretsDir, log, o)
		if err != nil {
			owner.Release()
			log.Error("managed Dgraph: could not take it over; restart this process", "data_dir", cfg.DataDir, "err", err)
			return
		}
		b.mu.Lock()
		b.cluster, b.owner = c, owner
		b.mu.Unlock()
		log.Info("managed Dgraph: taken over", "data_dir", cfg.DataDir)
	}()
}

// commandName names this process in a data dir's lock file, e.g. "knowmind serve".
func commandName() string {
	if len(os.Args) > 1 {
		return "knowmind " + os.Args[1]
	}
	return "knowmind"
}

// waitPortOpen waits until something listens on addr.
func waitPortOpen(ctx context.Context, addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !portOpen(addr) {
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing listens on %s after %s", addr, timeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
	return nil
}

// managedConfig is the managed Dgraph's configuration: serve's flags, and bulk-load mode for
// the commands that open with o.bulk.
func managedConfig(cfg Config, dgraphDir, aclSecret, keyFile string, log *slog.Logger, o opening) localdgraph.Config {
	return localdgraph.Config{
		Binary: cfg.DgraphBin, DataDir: dgraphDir,
		PortOffset: cfg.DgraphPortOffset, ACLSecretFile: aclSecret, EncryptionKeyFile: keyFile,
		CacheMB: cfg.DgraphCacheMB, CacheRemoveOnUpdate: o.bulk, MemLimitMB: cfg.DgraphMemLimitMB, GCPercent: cfg.DgraphGOGC, Logger: log,
	}
}

// checkTenants refuses to start on tenants whose vectors come from another
// embedder (graph.Client.CheckTenants), unless the command opens any.
func (b *backend) checkTenants(ctx context.Context, o opening) error {
	if b.embedder == nil || o.anyEmbedder {
		return nil
	}
	return b.client.CheckTenants(ctx)
}

// openManaged logs in as guardian with the password kept in
// secrets/guardian-password. On the very first start Dgraph still has its
// well-known default; it is replaced by a random one, written to
// guardian-password.new before the change and renamed after, so a crash in
// between cannot lock us out.
func openManaged(ctx context.Context, gcfg graph.Config, secretsDir string, log *slog.Logger) (*graph.Client, error) {
	cur := filepath.Join(secretsDir, "guardian-password")
	next := cur + ".new"
	var tried []string
	for _, f := range []string{cur, next} {
		pw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		gcfg.Password = strings.TrimSpace(string(pw))
		c, err := graph.Open(ctx, gcfg)
		if err == nil {
			if f == next {
				_ = os.Rename(next, cur)
			}
			return c, nil
		}
		tried = append(tried, f)
	}
	gcfg.Password = "password"
	c, err := graph.Open(ctx, gcfg)
	if err != nil {
		if len(tried) > 0 {
			return nil, fmt.Errorf("guardian login failed with %v and with the default password: %w", tried, err)
		}
		return nil, err
	}
	pw := make([]byte, 24)
	rand.Read(pw)
	newPW := hex.EncodeToString(pw)
	if err := os.WriteFile(next, []byte(newPW), 0o600); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.SetGuardianPassword(ctx, newPW); err != nil {
		c.Close()
		return nil, err
	}
	if err := os.Rename(next, cur); err != nil {
		c.Close()
		return nil, err
	}
	log.Info("managed Dgraph: guardian password set", "file", cur)
	return c, nil
}

func readOrCreateSecret(path string) ([]byte, error) {
	if b, err := os.ReadFile(path); err == nil {
		return b, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	s := []byte(hex.EncodeToString(b))
	if err := os.WriteFile(path, s, 0o600); err != nil {
		return nil, err
	}
	return s, nil
}

func portOpen(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 300*time.Millisecond)
	if err != nil {
		return false
	}
	conn.Close()
	return true
}

// systemWordLevels reads the English word levels recall compares a question's words by
// (Debian's scowl; english.SystemLevels), saying in the log when they are not installed.
func systemWordLevels(log *slog.Logger) *english.Levels {
	levels := english.SystemLevels()
	if levels.Len() == 0 {
		log.Info("no English word levels at "+english.SystemDir+" (Debian package scowl): recall keeps hits found by one everyday word of a question whose subject the tenant never wrote", "dir", english.SystemDir)
	} else {
		log.Info("English word levels", "dir", english.SystemDir, "words", levels.Len())
	}
	return levels
}
