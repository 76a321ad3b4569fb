package main

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bench/locomo"
	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/embed"
	"github.com/knowmind/knowmind/english"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dql"
	"github.com/knowmind/knowmind/graph/localdgraph"
	"github.com/knowmind/knowmind/search"
	"github.com/knowmind/knowmind/shapes"
	"github.com/knowmind/knowmind/timeq"
)

// benchFlags are the flags every benchmark shares: where Dgraph is and which embedder.
type benchFlags struct {
	dgraph, dgraphPassword, dgraphBin string
	embedder, modelDir, rerankerDir   string
	dir                               string
	portOffset                        int
	workers                           int
	removeOnUpdate                    bool
	bulkMode                          bool
	memLimitMB                        int
	gcPercent                         int
	cacheMB                           int
	logLevel                          string
	// snapshots: the service keeps index snapshots in <dir>/index (emptied at the start), as
	// serve does in data-dir/index (speed's restart row, tenants).
	snapshots bool
	// keepIndex: <dir>/index is kept from an earlier run (tenants --reuse-snapshots).
	keepIndex bool
	// indexMemoryMB is the service's --index-memory-mb (tenants); 0 = unbounded.
	indexMemoryMB int
}

func (b *benchFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&b.dgraph, "dgraph", "", "external Dgraph alpha host:9080 (guardian password: --dgraph-password); empty = a throwaway local Dgraph in a temp dir")
	fs.StringVar(&b.dgraphPassword, "dgraph-password", "password", "guardian password of --dgraph")
	fs.StringVar(&b.dgraphBin, "dgraph-bin", "", "dgraph binary for the throwaway Dgraph (default ./bin/dgraph)")
	fs.IntVar(&b.cacheMB, "dgraph-cache-mb", 1024, "cache bound of the throwaway alpha in MB (serve's --dgraph-cache-mb defaults to 512)")
	fs.IntVar(&b.memLimitMB, "dgraph-mem-limit-mb", 0, "soft memory limit (GOMEMLIMIT) of the throwaway alpha in MB, as serve's --dgraph-mem-limit-mb; 0 = none")
	fs.IntVar(&b.gcPercent, "dgraph-gogc", 0, "GOGC of the throwaway alpha, as serve's --dgraph-gogc; 0 = Go's default (100)")
	fs.BoolVar(&b.removeOnUpdate, "dgraph-remove-on-update", false, "experiment: the throwaway alpha's cache drops posting lists a commit changes (remove-on-update) instead of patching them, for the whole run")
	fs.BoolVar(&b.bulkMode, "bulk-mode", true, "load as `knowmind import` with its own managed Dgraph does: the throwaway alpha runs in bulk-load mode (remove-on-update) for the load and is restarted with serve's settings before the first recall, as serve starts after an import (speed only)")
	fs.StringVar(&b.embedder, "embedder", "hash", "embedding provider: hash (built-in), hugot")
	fs.StringVar(&b.modelDir, "model-dir", "", "model folder for --embedder hugot")
	fs.StringVar(&b.rerankerDir, "reranker-dir", "", "cross-encoder folder: adds the +rerank ablation")
	fs.StringVar(&b.dir, "dir", "", "keep the throwaway Dgraph's data (and its secret) in this folder and reuse what an earlier run loaded there")
	fs.IntVar(&b.portOffset, "port-offset", -1, "port offset of the throwaway Dgraph (-1: free ports; give a fixed one with --dir, its cluster remembers its addresses)")
	fs.IntVar(&b.workers, "workers", 2, "parallel writers while loading")
	fs.StringVar(&b.logLevel, "log-level", "warn", "log level")
}

// benchBackend is a graph client on a Dgraph the benchmark owns (or was pointed at).
type benchBackend struct {
	client   *graph.Client
	cluster  *localdgraph.Cluster
	embedder embed.Embedder
	reranker *embed.CrossEncoder
	dir      string
	alphas   []string
	password string

	// What restart needs to start the same Dgraph again and log in.
	clusterCfg localdgraph.Config
	graphCfg   graph.Config
}

// restart stops the throwaway Dgraph and starts it again with cfg changed by change, as
// `knowmind serve` starts the managed Dgraph again after `knowmind import` stopped it; the
// graph client logs in again.
func (b *benchBackend) restart(ctx context.Context, change func(*localdgraph.Config)) error {
	if b.cluster == nil {
		return errors.New("restart: not a throwaway Dgraph")
	}
	b.client.Close()
	b.client = nil
	b.cluster.Stop()
	b.cluster = nil
	change(&b.clusterCfg)
	var err error
	if b.cluster, err = localdgraph.Start(ctx, b.clusterCfg); err != nil {
		return err
	}
	b.client, err = graph.Open(ctx, b.graphCfg)
	return err
}

// alphaPid is the throwaway Dgraph's first alpha's process id (0: an external Dgraph).
func (b *benchBackend) alphaPid() int {
	if b.cluster == nil {
		return 0
	}
	return b.cluster.Pid("alpha1")
}

func (b *benchBackend) Close() {
	if b.client != nil {
		b.client.Close()
	}
	if b.cluster != nil {
		b.cluster.Stop()
	}
	if b.embedder != nil {
		b.embedder.Close()
	}
	if b.reranker != nil {
		b.reranker.Close()
	}
	if b.dir != "" {
		os.RemoveAll(b.dir)
	}
}

func openBenchBackend(ctx context.Context, f benchFlags) (*benchBackend, error) {
	log := newLogger(f.logLevel)
	b := &benchBackend{password: f.dgraphPassword}
	emb, err := embed.New(embed.Config{Provider: f.embedder, ModelDir: f.modelDir})
	if err != nil {
		return nil, fmt.Errorf("embedder: %w", err)
	}
	b.embedder = emb
	var rr search.Reranker
	if f.rerankerDir != "" {
		if b.reranker, err = embed.NewCrossEncoder(f.rerankerDir); err != nil {
			b.Close()
			return nil, err
		}
		rr = b.reranker
	}
	set, err := shapes.Default()
	if err != nil {
		b.Close()
		return nil, err
	}
	secret := make([]byte, 32)
	rand.Read(secret)
	var alphasHTTP []string
	if f.dgraph != "" {
		b.alphas = []string{f.dgraph}
	} else {
		dir := f.dir
		if dir == "" {
			if b.dir, err = os.MkdirTemp("", "knowmind-bench-"); err != nil {
				b.Close()
				return nil, err
			}
			dir = b.dir
		} else if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Close()
			return nil, err
		}
		// One secret serves as Dgraph's ACL secret and the service secret (namespace
		// passwords), kept in the folder so a later run can log into its tenants again.
		acl := filepath.Join(dir, "acl-secret")
		if old, err := os.ReadFile(acl); err == nil && len(old) == len(secret) {
			secret = old
		} else if err := os.WriteFile(acl, secret, 0o600); err != nil {
			b.Close()
			return nil, err
		}
		if f.portOffset >= 0 {
			// localdgraph would not notice another Dgraph on these ports and the benchmark
			// would silently run against it.
			for _, port := range []int{5080, 6080, 7080, 8080, 9080} {
				if portOpen("127.0.0.1:" + strconv.Itoa(port+f.portOffset)) {
					b.Close()
					return nil, fmt.Errorf("port %d is in use: choose another --port-offset", port+f.portOffset)
				}
			}
		}
		b.clusterCfg = localdgraph.Config{
			Binary: f.dgraphBin, DataDir: dir, PortOffset: f.portOffset, ACLSecretFile: acl,
			CacheMB: f.cacheMB, CacheRemoveOnUpdate: f.removeOnUpdate, MemLimitMB: f.memLimitMB, GCPercent: f.gcPercent, GracePeriod: 5 * time.Second, Logger: log,
		}
		b.cluster, err = localdgraph.Start(ctx, b.clusterCfg)
		if err != nil {
			b.Close()
			return nil, err
		}
		b.alphas, alphasHTTP = b.cluster.AlphaGRPC(), b.cluster.AlphaHTTP()
		b.password = "password"
		// A restart (--bulk-mode) starts it on the same ports: its zero remembers the alpha's
		// address, and the graph client dials it.
		b.clusterCfg.PortOffset = b.cluster.PortOffset()
	}
	b.graphCfg = graph.Config{
		Alphas: b.alphas, AlphasHTTP: alphasHTTP, User: "groot", Password: b.password,
		Secret: secret, Relations: set.Names(), Shapes: set, Embedder: emb, Reranker: rr, Logger: log,
		IndexMemoryBytes: int64(f.indexMemoryMB) << 20, WordLevels: english.SystemLevels(),
	}
	if dir := cmp.Or(f.dir, b.dir); f.snapshots && dir != "" {
		b.graphCfg.IndexDir = filepath.Join(dir, "index")
		if !f.keepIndex { // kept: read back as a restarted service would
			if err := os.RemoveAll(b.graphCfg.IndexDir); err != nil {
				b.Close()
				return nil, err
			}
		}
	}
	b.client, err = graph.Open(ctx, b.graphCfg)
	if err != nil {
		b.Close()
		return nil, err
	}
	return b, nil
}

// benchTenant is a tenant of the benchmark: the service's session on it (store, recall) and a
// client of the benchmark's own on its namespace, logged in with the tenant's credentials as an
// analyst would (graph hands out no raw client), for the fast loader and the DQL sent without
// the service.
type benchTenant struct {
	*graph.Tenant
	dg *dql.Conn
}

// DG is the benchmark's own client on the tenant's namespace.
func (t *benchTenant) DG() *dql.Conn { return t.dg }

// tenant opens (creating) the tenant name and logs a client of the benchmark into it.
func (b *benchBackend) tenant(ctx context.Context, name string) (*benchTenant, error) {
	ten, err := b.client.Tenant(ctx, name, true)
	if err != nil {
		return nil, err
	}
	cred, err := b.client.NamespaceCredentials(ctx, name)
	if err != nil {
		return nil, err
	}
	dg, err := dql.Dial(ctx, b.alphas, cred)
	if err != nil {
		return nil, fmt.Errorf("login into tenant %s: %w", name, err)
	}
	return &benchTenant{Tenant: ten, dg: dg}, nil
}

// parallel runs fn(i) for i in 0..n-1 on workers goroutines and returns the first error.
func parallel(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next atomic.Int64
	var once sync.Once
	var first error
	var wg sync.WaitGroup
	for range max(workers, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, i); err != nil {
					once.Do(func() { first = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

var tenantUnsafe = regexp.MustCompile(`[^a-z0-9_-]+`)

// runBenchLocomo stores each LoCoMo conversation in its own tenant (one memory per turn: title
// the speaker, content the turn's text (with --captions its image's caption too), source the dia_id, tag the session date; consecutive
// turns of a session linked RELATES_TO) and scores recall's ablations on every category 1–4
// question.
func runBenchLocomo(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("bench locomo", flag.ContinueOnError)
	var bf benchFlags
	bf.register(fs)
	data := fs.String("data", "", "LoCoMo-format JSON file (e.g. ../shared/data/locomo/locomo-dev.json)")
	captions := fs.Bool("captions", false, "store a turn's shared image as its BLIP caption after the text (\"[image: …]\"), as a capture of the message could; measured in docs/recall.md, not the default (the tenants get the suffix -captions, so a reused --dir never mixes the two)")
	link := fs.Bool("link-turns", true, "link consecutive turns of a session with RELATES_TO (LoCoMo has no relations of its own)")
	sequences := fs.Bool("sequences", true, "store each turn in its session's sequence at its turn number (store_memory's sequence and position), for the context signal (the tenants get the suffix -nosequence without, so a reused --dir never mixes the two)")
	derive := fs.Bool("derive-sequences", true, "with --sequences=false: store the turns one by one in order as one writer (StoreMemoryInput.Writer), so the service derives their sequences (knowmind.ImplicitSequenceGap); the tenants get the suffix -derived instead of -nosequence")
	sessionTimes := fs.Bool("session-times", true, "give each turn its session's date as its time (Memory.valid_from, what capture's occurred_at sets), for the time signal")
	only := fs.String("only", "", "run only the rankings whose name matches this regular expression (the summary compares those)")
	scoreReport := fs.Bool("scores", false, "also print where the default ranking's scores lie without a floor: the first evidence turn's and the off-topic questions' best (a diagnosis of the floor)")
	depthReport := fs.Bool("evidence-depth", false, "also print where the default ranking puts each category's evidence turns (top 10, 11-25, beyond), a diagnosis")
	dumpFile := fs.String("dump", "", "also write the default ranking's first 25 hits of every question and off-topic question, without a floor and with the evidence behind each hit, to this file as JSON lines (for simulating rules over the scores)")
	dumpCommon := fs.Bool("dump-common-words", true, "with false, --dump writes the default ranking without the everyday-word rule (Weights.CommonWords), on which bench rules simulates the rules over word levels")
	convRange := fs.String("convs", "", "only these conversations of the file, 1-based, e.g. 1-2 or 3-5 (a split to choose a constant on and one to confirm it on)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *data == "" {
		return fmt.Errorf("--data is required")
	}
	onlyRe, err := regexp.Compile(*only)
	if err != nil {
		return fmt.Errorf("--only: %w", err)
	}
	convs, err := locomo.Load(*data)
	if err != nil {
		return err
	}
	if convs, err = selectConvs(convs, *convRange); err != nil {
		return err
	}
	b, err := openBenchBackend(ctx, bf)
	if err != nil {
		return err
	}
	defer b.Close()

	type convTenant struct {
		ten   *benchTenant
		diaOf map[string]string // memory id → dia_id
	}
	tenants := map[string]*convTenant{}
	var dups int
	var retried atomic.Int64
	loadStart := time.Now()
	var turns int
	for ci := range convs {
		c := &convs[ci]
		name := "locomo-" + strings.Trim(tenantUnsafe.ReplaceAllString(strings.ToLower(c.SampleID), "-"), "-")
		if *captions {
			name += "-captions"
		}
		writer, workers := "", bf.workers
		switch {
		case !*sequences && *derive:
			name += "-derived"
			writer, workers = "locomo-bench", 1 // captured turn by turn
		case !*sequences:
			name += "-nosequence"
		}
		ten, err := b.tenant(ctx, name)
		if err != nil {
			return err
		}
		ct := &convTenant{ten: ten, diaOf: map[string]string{}}
		tenants[c.SampleID] = ct
		if stored, err := storedSources(ctx, ten); err != nil {
			return err
		} else if len(stored) > 0 {
			ct.diaOf = stored // loaded by an earlier run in --dir
			fmt.Fprintf(os.Stderr, "reusing %s: %d memories\n", c.SampleID, len(stored))
			continue
		}
		ids := make([]string, len(c.Turns))
		var mu sync.Mutex
		err = parallel(ctx, len(c.Turns), workers, func(ctx context.Context, i int) error {
			t := c.Turns[i]
			content := t.Text
			if *captions {
				content = locomo.WithCaption(t)
			}
			in := knowmind.StoreMemoryInput{
				Title: t.Speaker, Content: content, MemoryType: knowmind.MemoryEpisodic,
				Tags: []string{t.SessionDate}, Source: t.DiaID, Writer: writer,
			}
			if *sequences {
				in.Sequence, in.Position = fmt.Sprintf("session %d", t.Session), new(locomo.TurnNumber(t))
			}
			if *sessionTimes {
				// Said at its session's date: the times it names ("yesterday") resolve against it.
				at, err := sessionTime(t.SessionDate)
				if err != nil {
					return fmt.Errorf("%s %s: %w", c.SampleID, t.DiaID, err)
				}
				in.OccurredAt = &at
			}
			res, err := ten.StoreMemory(ctx, in)
			for try := 0; try < 3 && knowmind.AsError(err) != nil && knowmind.AsError(err).Reason == knowmind.ReasonIngestFailed; try++ {
				// Parallel writers to one vector index abort each other; the failed attempt
				// stays as a failed record (never recalled) and the store is tried again.
				retried.Add(1)
				res, err = ten.StoreMemory(ctx, in)
			}
			if err != nil {
				return fmt.Errorf("%s %s: %w", c.SampleID, t.DiaID, err)
			}
			mu.Lock()
			defer mu.Unlock()
			ids[i] = res.MemoryID
			if res.Unchanged {
				dups++ // same text said twice: one memory, scored as its first dia_id
			} else {
				ct.diaOf[res.MemoryID] = t.DiaID
			}
			return nil
		})
		if err != nil {
			return err
		}
		turns += len(c.Turns)
		if *link {
			var pairs [][2]string
			for i := 1; i < len(c.Turns); i++ {
				if c.Turns[i].Session == c.Turns[i-1].Session && ids[i] != ids[i-1] {
					pairs = append(pairs, [2]string{ids[i-1], ids[i]})
				}
			}
			// One writer: links of neighbouring turns share nodes and would only abort each other.
			for _, p := range pairs {
				if _, err := ten.Link(ctx, p[0], p[1], "RELATES_TO"); err != nil {
					return fmt.Errorf("link %s: %w", c.SampleID, err)
				}
			}
		}
		fmt.Fprintf(os.Stderr, "loaded %s: %d turns (%.0fs so far)\n", c.SampleID, len(c.Turns), time.Since(loadStart).Seconds())
	}
	if *sessionTimes {
		for ci := range convs {
			if err := setSessionTimes(ctx, tenants[convs[ci].SampleID].ten, &convs[ci]); err != nil {
				return err
			}
		}
	}
	if turns > 0 {
		fmt.Fprintf(os.Stderr, "loaded %d turns of %d conversations in %.0fs (%.1f turns/s, %d repeated texts stored once, %d stores retried)\n",
			turns, len(convs), time.Since(loadStart).Seconds(), float64(turns)/time.Since(loadStart).Seconds(), dups, retried.Load())
	}

	// The questions are asked after the conversation: a relative time they name ("last
	// weekend") resolves against the date of its final dated part (LoCoMo's newest session_N_date_time).
	asked := map[string]time.Time{}
	relative := 0
	for ci := range convs {
		c := &convs[ci]
		for _, t := range c.Turns {
			if at, err := sessionTime(t.SessionDate); err == nil && at.After(asked[c.SampleID]) {
				asked[c.SampleID] = at
			}
		}
		for _, q := range c.Questions {
			if q.Category == 5 {
				continue // not scored
			}
			if _, named := timeq.Parse(q.Text); !named {
				if _, named := timeq.ParseAt(q.Text, asked[c.SampleID]); named {
					relative++
				}
			}
		}
	}
	ranker := func(hops int, sig ablation) locomo.Ranker {
		return func(ctx context.Context, conv *locomo.Conversation, q locomo.Question) ([]string, error) {
			ct := tenants[conv.SampleID]
			res, err := ct.ten.RecallWith(ctx, knowmind.RecallQuery{Query: q.Text, K: 10, Hops: hops, MinScore: sig.floor(), AskedAt: asked[conv.SampleID]}, sig.options())
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(res.Hits))
			for _, h := range res.Hits {
				out = append(out, h.Source) // the dia_id
			}
			return out, nil
		}
	}
	reference, referenceText := "reference: in-memory BM25 (speaker+text)", locomo.WithSpeaker
	if *captions {
		reference = "reference: in-memory BM25 (speaker+text+caption)"
		referenceText = func(t locomo.Turn) string { return t.Speaker + ": " + locomo.WithCaption(t) }
	}
	runs := []struct {
		name string
		rank locomo.Ranker
	}{
		{reference, locomo.BM25Baseline(convs, "", referenceText, bm25.Params{})},
		{"text only (BM25)", ranker(0, ablation{NoVector: true, NoRerank: true, NoSemantic: true})},
		{"vector only", ranker(0, ablation{NoText: true, NoRerank: true})},
		{"text+vector", ranker(0, ablation{NoRerank: true})},
		{"text+vector+graph (hops=1)", ranker(1, ablation{NoRerank: true})},
		{"text+vector+graph (hops=2) without support, time", ranker(2, ablation{NoRerank: true, NoSupport: true, NoTime: true})},
		{"text+vector+graph (hops=2) without neighbour support", ranker(2, ablation{NoRerank: true, NoSupport: true})},
		{"text+vector+graph (hops=2) with feedback (off by default)", ranker(2, ablation{NoRerank: true, WithFeedback: true})},
		{"text+vector+graph (hops=2) without time", ranker(2, ablation{NoRerank: true, NoTime: true})},
		{"text+vector+graph (hops=2) without the days the text names (time against the memory's own time only)", ranker(2, ablation{NoRerank: true, NoTextDates: true, AsksWhen: -1})},
		{"text+vector+graph (hops=2) semantic signals not scaled by the query's coverage", ranker(2, ablation{NoRerank: true, NoCoverage: true})},
		{"text+vector+graph (hops=2) the hash embedder's vector signal not scaled by the query's coverage", ranker(2, ablation{NoRerank: true, NoVectorCoverage: true})},
		{"text+vector+graph (hops=2) without relative times in questions (\"last week\" not resolved against the time of asking)", ranker(2, ablation{NoRerank: true, NoRelativeDates: true})},
		{"text+vector+graph (hops=2) without bare weekdays in questions (other relative times resolved)", ranker(2, ablation{NoRerank: true, NoWeekdays: true})},
		{"text+vector+graph (hops=2) with \"recently\" in questions as the month before (off by default)", ranker(2, ablation{NoRerank: true, WithRecently: true})},
		{"text+vector+graph (hops=2) without the when-question signal", ranker(2, ablation{NoRerank: true, AsksWhen: -1})},
		{"text+vector+graph (hops=2) when-question signal 0.25", ranker(2, ablation{NoRerank: true, AsksWhen: 0.25})},
		{"text+vector+graph (hops=2) when-question signal 1", ranker(2, ablation{NoRerank: true, AsksWhen: 1})},
		{"text+vector+graph (hops=2) without semantic", ranker(2, ablation{NoRerank: true, NoSemantic: true})},
		{"text+vector+graph (hops=2) semantic weight 1", ranker(2, ablation{NoRerank: true, SemanticWeight: 1})},
		{"text+vector+graph (hops=2) semantic weight 0.25", ranker(2, ablation{NoRerank: true, SemanticWeight: 0.25})},
		{"text+vector+graph (hops=2) without title", ranker(2, ablation{NoRerank: true, NoTitle: true})},
		{"text+vector+graph (hops=2) title weight 0.125", ranker(2, ablation{NoRerank: true, TitleWeight: 0.125})},
		{"text+vector+graph (hops=2) title weight 0.25", ranker(2, ablation{NoRerank: true, TitleWeight: 0.25})},
		{"text+vector+graph (hops=2) title weight 1", ranker(2, ablation{NoRerank: true, TitleWeight: 1})},
		{"text+vector+graph (hops=2) title factor on direct hits only", ranker(2, ablation{NoRerank: true, NoTitleNeighbours: true})},
		{"text+vector+graph (hops=2) Dgraph's full-text step instead of the service's text index", ranker(2, ablation{NoRerank: true, DgraphText: true})},
		{"text+vector+graph (hops=2) without the PPMI+SVD model (no pool, no concept signal)", ranker(2, ablation{NoRerank: true, SemanticPool: -1, ConceptWeight: -1})},
		{"text+vector+graph (hops=2) without the concept signal (semantic pool only)", ranker(2, ablation{NoRerank: true, ConceptWeight: -1})},
		{"text+vector+graph (hops=2) without the semantic pool (concept signal only)", ranker(2, ablation{NoRerank: true, SemanticPool: -1})},
		{"text+vector+graph (hops=2) PPMI+SVD model without links as context", ranker(2, ablation{NoRerank: true, NoSemanticLinks: true})},
		{"text+vector+graph (hops=2) concept signal 0.5", ranker(2, ablation{NoRerank: true, ConceptWeight: 0.5})},
		{"text+vector+graph (hops=2) semantic pool 50 as text 0.25, no concept signal", ranker(2, ablation{NoRerank: true, SemanticPool: 50, PoolAsText: 0.25, ConceptWeight: -1})},
		{"text+vector+graph (hops=2) PPMI+SVD instead of wordvec as the semantic signal", ranker(2, ablation{NoRerank: true, SemanticSVD: true})},
		{"text+vector+graph (hops=2) without the context signal (the memory before in its sequence)", ranker(2, ablation{NoRerank: true, ContextWeight: -1})},
		{"text+vector+graph (hops=2) context signal 0.25", ranker(2, ablation{NoRerank: true, ContextWeight: 0.25})},
		{"text+vector+graph (hops=2) context signal 1", ranker(2, ablation{NoRerank: true, ContextWeight: 1})},
		{"text+vector+graph (hops=2) context signal a member of the weighted mean", ranker(2, ablation{NoRerank: true, ContextMember: true})},
		{"text+vector+graph (hops=2) context signal without followers as candidates", ranker(2, ablation{NoRerank: true, Followers: -1})},
		{"text+vector+graph (hops=0) without the context signal", ranker(0, ablation{NoRerank: true, ContextWeight: -1})},
		{"text+vector+graph (hops=0) with the context signal", ranker(0, ablation{NoRerank: true})},
		{"text+vector+graph (hops=0) with the context signal, without followers as candidates", ranker(0, ablation{NoRerank: true, Followers: -1})},
		{"text+vector+graph (hops=2) floor raised by the question's word coverage (min_score / coverage)", ranker(2, ablation{NoRerank: true, CoverageFloor: true})},
		{"text+vector+graph (hops=2) keeping hits found by one everyday word of a question whose subject the tenant never wrote", ranker(2, ablation{NoRerank: true, NoCommonWords: true})},
		{"text+vector+graph (hops=2) second stage: IDF coverage 0.25", ranker(2, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25}})},
		{"text+vector+graph (hops=2) second stage: term proximity 0.25", ranker(2, ablation{NoRerank: true, Stage2: search.StageWeights{Proximity: 0.25}})},
		{"text+vector+graph (hops=2) second stage: term proximity 0.5", ranker(2, ablation{NoRerank: true, Stage2: search.StageWeights{Proximity: 0.5}})},
		{"text+vector+graph (hops=2) second stage: IDF coverage 0.25, term proximity 0.25", ranker(2, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25, Proximity: 0.25}})},
		{"text+vector+graph (hops=2) second stage on word hits: IDF coverage 0.25", ranker(2, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25, WordHits: true}})},
		{"text+vector+graph (hops=2) second stage on word hits: term proximity 0.1", ranker(2, ablation{NoRerank: true, Stage2: search.StageWeights{Proximity: 0.1, WordHits: true}})},
		{"text+vector+graph (hops=2) second stage on word hits: IDF coverage 0.25, term proximity 0.25", ranker(2, ablation{NoRerank: true, Stage2: search.StageWeights{Coverage: 0.25, Proximity: 0.25, WordHits: true}})},
		{"text+vector+graph (hops=2) min_score 0 (no floor)", ranker(2, ablation{NoRerank: true, MinScore: -1})},
		{"text+vector+graph (hops=2, the tool's default)", ranker(2, ablation{NoRerank: true})},
	}
	if b.client.RerankerName() != "none" {
		runs = append(runs, struct {
			name string
			rank locomo.Ranker
		}{fmt.Sprintf("text+vector+graph (hops=2) + rerank (%s)", b.client.RerankerName()), ranker(2, ablation{})})
	}
	var named []locomo.Named
	w := os.Stdout
	fmt.Fprintf(w, "# LoCoMo retrieval, %s, %d conversations, embedder %s, English word levels: %d words\n\n", filepath.Base(*data), len(convs), b.embedder.ID(), english.SystemLevels().Len())
	fmt.Fprintf(w, "Questions naming a time only relative to the time of asking (asked at each conversation's newest dated part): %d of the scored questions\n\n", relative)
	for _, r := range runs {
		if !onlyRe.MatchString(r.name) {
			continue
		}
		start := time.Now()
		rep, err := locomo.Evaluate(ctx, convs, r.rank)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		if rep.OffTopic, err = locomo.EvaluateOffTopic(ctx, convs, r.rank); err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		fmt.Fprintf(w, "## %s (%d questions, %.1f ms/question)\n\n", r.name, rep.Overall.Questions,
			float64(time.Since(start).Microseconds())/1000/float64(max(rep.Overall.Questions, 1)))
		rep.WriteTable(w)
		fmt.Fprintf(w, "\noff-topic: %d of %d questions got hits (%d hits in all)\n\n", rep.OffTopic.WithHits, rep.OffTopic.Asked, rep.OffTopic.Hits)
		named = append(named, locomo.Named{Name: r.name, Report: rep})
	}
	if *scoreReport {
		if err := writeScoreReport(ctx, w, convs, func(ctx context.Context, conv *locomo.Conversation, q string) ([]scoredHit, error) {
			res, err := tenants[conv.SampleID].ten.RecallWith(ctx, knowmind.RecallQuery{Query: q, K: 10, Hops: 2}, ablation{NoRerank: true}.options())
			if err != nil {
				return nil, err
			}
			out := make([]scoredHit, 0, len(res.Hits))
			for _, h := range res.Hits {
				out = append(out, scoredHit{h.Source, h.Score})
			}
			return out, nil
		}); err != nil {
			return err
		}
	}
	if *depthReport {
		if err := writeEvidenceDepth(ctx, w, convs, func(ctx context.Context, conv *locomo.Conversation, q locomo.Question) ([]string, error) {
			ct := tenants[conv.SampleID]
			res, err := ct.ten.RecallWith(ctx, knowmind.RecallQuery{Query: q.Text, K: knowmind.RecallMaxK, Hops: 2, MinScore: knowmind.RecallMinScore}, ablation{NoRerank: true}.options())
			if err != nil {
				return nil, err
			}
			out := make([]string, 0, len(res.Hits))
			for _, h := range res.Hits {
				out = append(out, h.Source)
			}
			return out, nil
		}); err != nil {
			return err
		}
	}
	if *dumpFile != "" {
		f, err := os.Create(*dumpFile)
		if err != nil {
			return err
		}
		defer f.Close()
		o := ablation{NoRerank: true, NoCommonWords: !*dumpCommon}.options()
		for ci := range convs {
			conv := &convs[ci]
			ten := tenants[conv.SampleID].ten.Tenant
			for _, q := range conv.Questions {
				if q.Category < 1 || q.Category > 4 || len(q.Evidence) == 0 {
					continue
				}
				d := dumpQuestion{Set: "locomo", Conv: conv.SampleID, Cat: strconv.Itoa(q.Category), Answers: q.Evidence}
				if err := dumpRecall(ctx, f, ten, q.Text, asked[conv.SampleID], 2, o, d); err != nil {
					return err
				}
			}
			for _, q := range locomo.OffTopic {
				if err := dumpRecall(ctx, f, ten, q, asked[conv.SampleID], 2, o, dumpQuestion{Set: "locomo", Conv: conv.SampleID, OffTopic: true}); err != nil {
					return err
				}
			}
		}
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintln(w, "## Summary")
	fmt.Fprintln(w)
	locomo.WriteSummary(w, named)
	writeFusionGain(w, named)
	return nil
}

// writeEvidenceDepth prints, per category, how many evidence turns the ranking puts in the top
// 10, at 11..25 or beyond, and how many of those beyond have a turn of the same session within
// two turns in the top 10 (reachable over the graph) — a diagnosis, not a score.
func writeEvidenceDepth(ctx context.Context, w io.Writer, convs []locomo.Conversation, rank locomo.Ranker) error {
	type counts struct{ top, mid, beyond, near, qs, qsAllMid int }
	by := map[int]*counts{}
	for ci := range convs {
		conv := &convs[ci]
		for _, q := range conv.Questions {
			if q.Category < 1 || q.Category > 4 || len(q.Evidence) == 0 {
				continue
			}
			ranked, err := rank(ctx, conv, q)
			if err != nil {
				return err
			}
			c := by[q.Category]
			if c == nil {
				c = &counts{}
				by[q.Category] = c
			}
			c.qs++
			allIn25 := true
			for _, e := range q.Evidence {
				i := slices.Index(ranked, e)
				switch {
				case i >= 0 && i < 10:
					c.top++
				case i >= 10:
					c.mid++
				default:
					allIn25 = false
					c.beyond++
					for _, r := range ranked[:min(10, len(ranked))] {
						if sameSessionNear(r, e, 2) {
							c.near++
							break
						}
					}
				}
			}
			if allIn25 {
				c.qsAllMid++
			}
		}
	}
	fmt.Fprintln(w, "## Evidence depth (default ranking, k 25)")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| category | questions | all evidence in top 25 | evidence in top 10 | at 11-25 | beyond 25 | of those, a turn within 2 in the top 10 |")
	fmt.Fprintln(w, "|---|--:|--:|--:|--:|--:|--:|")
	for _, cat := range locomo.Categories {
		if c := by[cat.ID]; c != nil {
			fmt.Fprintf(w, "| %s | %d | %d | %d | %d | %d | %d |\n", cat.Name, c.qs, c.qsAllMid, c.top, c.mid, c.beyond, c.near)
		}
	}
	fmt.Fprintln(w)
	return nil
}

// sameSessionNear tells whether dia_ids a and b ("D<session>:<turn>") are in one session at
// most d turns apart.
func sameSessionNear(a, b string, d int) bool {
	sa, ta, okA := strings.Cut(a, ":")
	sb, tb, okB := strings.Cut(b, ":")
	if !okA || !okB || sa != sb {
		return false
	}
	x, errX := strconv.Atoi(ta)
	y, errY := strconv.Atoi(tb)
	return errX == nil && errY == nil && x-y <= d && y-x <= d
}

// selectConvs keeps the conversations of a 1-based range "a-b" (or one number; "" keeps all).
func selectConvs(convs []locomo.Conversation, r string) ([]locomo.Conversation, error) {
	if r == "" {
		return convs, nil
	}
	lo, hi, found := strings.Cut(r, "-")
	if !found {
		hi = lo
	}
	a, errA := strconv.Atoi(lo)
	b, errB := strconv.Atoi(hi)
	if errA != nil || errB != nil || a < 1 || b < a || b > len(convs) {
		return nil, fmt.Errorf("--convs %q: want a-b within 1-%d", r, len(convs))
	}
	return convs[a-1 : b], nil
}

// writeFusionGain says by how much the fused rankings beat each single signal (R@10 and MRR).
func writeFusionGain(w io.Writer, runs []locomo.Named) {
	var text, vector *locomo.Report
	for i := range runs {
		switch runs[i].Name {
		case "text only (BM25)":
			text = &runs[i].Report
		case "vector only":
			vector = &runs[i].Report
		}
	}
	if text == nil || vector == nil {
		return
	}
	fmt.Fprintln(w)
	for _, r := range runs {
		if !strings.HasPrefix(r.Name, "text+vector") {
			continue
		}
		m := r.Report.Overall
		fmt.Fprintf(w, "- %s: R@10 %+.3f vs text only, %+.3f vs vector only; MRR %+.3f / %+.3f\n", r.Name,
			m.Any[2]-text.Overall.Any[2], m.Any[2]-vector.Overall.Any[2], m.MRR-text.Overall.MRR, m.MRR-vector.Overall.MRR)
	}
}

// setSessionTimes sets each turn's time (Memory.valid_from) to its session's date, as capture
// does with occurred_at: StoreMemory stamps the time of storing. Turns already at their
// session's date are left alone.
func setSessionTimes(ctx context.Context, ten *benchTenant, c *locomo.Conversation) error {
	when := map[string]time.Time{}
	for _, t := range c.Turns {
		d, err := sessionTime(t.SessionDate)
		if err != nil {
			return fmt.Errorf("%s %s: %w", c.SampleID, t.DiaID, err)
		}
		when[t.DiaID] = d
	}
	return setValidFrom(ctx, ten, when)
}

// sessionTime parses a LoCoMo session date ("1:56 pm on 8 May, 2023").
func sessionTime(s string) (time.Time, error) {
	d, err := time.Parse("3:04 pm on 2 January, 2006", s)
	if err != nil {
		return time.Time{}, fmt.Errorf("session date %q: %w", s, err)
	}
	return d, nil
}

// setValidFrom sets the time (Memory.valid_from) of each memory whose source is a key of when;
// memories already at their time are left alone.
func setValidFrom(ctx context.Context, ten *benchTenant, when map[string]time.Time) error {
	resp, err := ten.DG().Query(ctx, `{ m(func: eq(Memory.status, "indexed")) { uid Memory.source Memory.valid_from } }`, nil)
	if err != nil {
		return err
	}
	var out struct {
		M []struct {
			UID       string    `json:"uid"`
			Source    string    `json:"Memory.source"`
			ValidFrom time.Time `json:"Memory.valid_from"`
		} `json:"m"`
	}
	if err := json.Unmarshal(resp, &out); err != nil {
		return err
	}
	var nq strings.Builder
	for _, m := range out.M {
		if d, ok := when[m.Source]; ok && !d.Equal(m.ValidFrom) {
			fmt.Fprintf(&nq, "<%s> <Memory.valid_from> %q .\n", m.UID, d.UTC().Format(time.RFC3339))
		}
	}
	if nq.Len() == 0 {
		return nil
	}
	return ten.DG().SetNquads(ctx, []byte(nq.String()))
}

// storedSources maps memory id → source of every indexed memory of the tenant (empty for a new
// tenant).
func storedSources(ctx context.Context, ten *benchTenant) (map[string]string, error) {
	resp, err := ten.DG().Query(ctx, `{ m(func: eq(Memory.status, "indexed")) { Memory.id Memory.source } }`, nil)
	if err != nil {
		return nil, err
	}
	var out struct {
		M []struct {
			ID     string `json:"Memory.id"`
			Source string `json:"Memory.source"`
		} `json:"m"`
	}
	if err := json.Unmarshal(resp, &out); err != nil {
		return nil, err
	}
	m := make(map[string]string, len(out.M))
	for _, x := range out.M {
		m[x.ID] = x.Source
	}
	return m, nil
}
