package embed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/backends"
	"github.com/knights-analytics/hugot/options"
	"github.com/knights-analytics/hugot/pipelines"

	"github.com/knowmind/knowmind/internal/runes"
)

// hugotEmbedder runs a sentence-transformer ONNX model in-process through
// hugot's pure-Go (simplego) backend: no cgo, no onnxruntime. hugot's ORT
// and XLA backends need native libraries and stay behind hugot's own build
// tags; this package does not use them.
type hugotEmbedder struct {
	session  *hugot.Session
	pipeline *pipelines.FeatureExtractionPipeline

	id                         string
	dim                        int
	batch, concurrency         int
	maxRunes                   int
	queryPrefix, passagePrefix string

	mu         sync.RWMutex // embeds hold it shared, Close exclusively
	preprocess sync.Mutex
	closed     bool
}

// Sequence and batch shapes are padded up to these buckets: the Go backend
// compiles one program per input shape and caches it, so unbounded shapes
// would grow memory without limit; steps of about √2 cost at most ~1.5x
// padding.
var hugotSequenceBuckets = []int{16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048}

// newGoSession starts a hugot session on the pure-Go backend, padding inputs up to these batch
// sizes and sequence lengths (the embedder's and the cross-encoder's).
func newGoSession(batchBuckets, sequenceBuckets []int) (*hugot.Session, error) {
	return hugot.NewGoSession(
		options.WithGoMLXBatchBuckets(batchBuckets),
		options.WithGoMLXSequenceBuckets(sequenceBuckets),
	)
}

func newHugot(cfg Config) (Embedder, error) {
	if cfg.ModelDir == "" {
		return nil, errors.New("embed: hugot provider needs ModelDir, a folder with model.onnx and tokenizer.json (get one with `knowmind model pull NAME`)")
	}
	dir, err := filepath.Abs(cfg.ModelDir)
	if err != nil {
		return nil, fmt.Errorf("embed: model dir %q: %w", cfg.ModelDir, err)
	}
	onnxFile, err := checkModelDir(dir)
	if err != nil {
		return nil, err
	}
	if err := checkPooling(dir); err != nil {
		return nil, err
	}
	name := cfg.Model
	if name == "" {
		name = filepath.Base(dir)
	}
	fingerprint, err := modelFingerprint(dir, onnxFile)
	if err != nil {
		return nil, err
	}

	batch := cmp0(cfg.Batch, DefaultBatch)
	maxTokens := cmp0(cfg.MaxTokens, DefaultMaxTokens)
	if modelMax := maxPositionEmbeddings(dir); modelMax > 0 && modelMax < maxTokens {
		maxTokens = modelMax
	}
	session, err := newGoSession(batchBuckets(batch), sequenceBuckets(maxTokens))
	if err != nil {
		return nil, fmt.Errorf("embed: start hugot session: %w", err)
	}
	e := &hugotEmbedder{
		session:     session,
		batch:       batch,
		concurrency: cmp0(cfg.Concurrency, defaultConcurrency),
		// The tokenizer sees at most this many characters: it would cut the
		// tokens to maxTokens anyway, but only after tokenising all of a
		// possibly megabyte-long text. 16 characters per token is far more
		// than any WordPiece/SentencePiece vocabulary averages.
		maxRunes: maxTokens * 16,
		id:       "hugot:" + name + "@" + fingerprint,
	}
	e.queryPrefix, e.passagePrefix = prefixes(cfg, name, dir)
	if err := e.load(dir, onnxFile, maxTokens); err != nil {
		return nil, errors.Join(err, session.Destroy())
	}
	if cfg.Dim != 0 && cfg.Dim != e.dim {
		return nil, errors.Join(fmt.Errorf("embed: model %s gives %d dimensions, but Dim is set to %d", dir, e.dim, cfg.Dim), session.Destroy())
	}
	return e, nil
}

func (e *hugotEmbedder) load(dir, onnxFile string, maxTokens int) error {
	newPipeline := func(name string, opts ...hugot.FeatureExtractionOption) (*pipelines.FeatureExtractionPipeline, error) {
		p, err := hugot.NewPipeline(e.session, hugot.FeatureExtractionConfig{
			ModelPath:    dir,
			OnnxFilename: onnxFile,
			Name:         name,
			Options:      append(opts, pipelines.WithNormalization()),
		})
		if err != nil {
			return nil, fmt.Errorf("embed: load model %s: %w", dir, err)
		}
		return p, nil
	}
	p, err := newPipeline("embed")
	if err != nil {
		return err
	}
	// Sentence-transformers exports may carry the model's own pooled
	// "sentence_embedding" next to per-token "last_hidden_state"; the pooled
	// one is right by construction, per-token ones get hugot's mean pooling.
	var outputs []string
	for _, o := range p.Model.OutputsMeta {
		outputs = append(outputs, o.Name)
	}
	for _, want := range []string{"sentence_embedding", "last_hidden_state", "token_embeddings"} {
		if contains(outputs, want) {
			if want != p.Output.Name {
				if p, err = newPipeline("embed-"+want, pipelines.WithOutputName(want)); err != nil {
					return err
				}
			}
			break
		}
	}
	e.pipeline = p
	if dims := p.Output.Dimensions; len(dims) < 2 || len(dims) > 3 {
		return fmt.Errorf("embed: model %s output %q has shape %v; want [batch, dim] or [batch, tokens, dim]", dir, p.Output.Name, dims)
	}
	tk := p.Model.Tokenizer
	if tk == nil {
		return fmt.Errorf("embed: model %s has no tokenizer.json", dir)
	}
	if tk.MaxAllowedTokens == 0 || tk.MaxAllowedTokens > maxTokens {
		tk.MaxAllowedTokens = maxTokens
	}
	// The output's last axis may be symbolic in the ONNX file: embed once
	// to learn it (this also proves the model runs before we serve).
	vecs, err := e.run([]string{e.passagePrefix + "dimension probe"})
	if err != nil {
		return fmt.Errorf("embed: model %s failed a test embedding: %w", dir, err)
	}
	e.dim = len(vecs[0])
	if e.dim == 0 {
		return fmt.Errorf("embed: model %s returns empty vectors", dir)
	}
	return nil
}

func (e *hugotEmbedder) ID() string       { return e.id }
func (e *hugotEmbedder) Provider() string { return "hugot" }
func (e *hugotEmbedder) Dim() int         { return e.dim }

func (e *hugotEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, e.passagePrefix, texts)
}

func (e *hugotEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := e.embed(ctx, e.queryPrefix, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *hugotEmbedder) embed(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, errors.New("embed: hugot embedder is closed")
	}
	inputs := make([]string, len(texts))
	for i, t := range texts {
		// hugot's Go tokenizer calls log.Fatal on a tokenizer error; valid
		// UTF-8 of bounded length is what keeps it on the happy path.
		inputs[i] = prefix + runes.Cut(strings.ToValidUTF8(t, "\uFFFD"), e.maxRunes)
	}
	vecs, err := inBatches(ctx, inputs, e.batch, e.concurrency, func(_ context.Context, batch []string) ([][]float32, error) {
		return e.run(batch)
	})
	if err != nil {
		return nil, err
	}
	if err := checkDims(vecs, e.dim); err != nil {
		return nil, err
	}
	return vecs, nil
}

// run embeds one batch. It is RunPipeline taken apart so that only
// preprocessing is serialised: hugot's Go tensor preparation writes shared
// model state (a data race between concurrent batches), while the forward
// pass, where the time goes, may overlap. The pipeline cannot be
// interrupted; inBatches checks ctx between batches.
func (e *hugotEmbedder) run(texts []string) (vecs [][]float32, err error) {
	batch := backends.NewBatch(len(texts))
	defer func() { err = errors.Join(err, batch.Destroy()) }()
	e.preprocess.Lock()
	err = e.pipeline.Preprocess(batch, texts)
	e.preprocess.Unlock()
	if err != nil {
		return nil, fmt.Errorf("embed: hugot tokenize: %w", err)
	}
	if err := e.pipeline.Forward(batch); err != nil {
		return nil, fmt.Errorf("embed: hugot forward: %w", err)
	}
	out, err := e.pipeline.Postprocess(batch)
	if err != nil {
		return nil, fmt.Errorf("embed: hugot pooling: %w", err)
	}
	if len(out.Embeddings) != len(texts) {
		return nil, fmt.Errorf("embed: hugot returned %d vectors for %d texts", len(out.Embeddings), len(texts))
	}
	return out.Embeddings, nil
}

func (e *hugotEmbedder) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	return e.session.Destroy()
}

// checkModelDir verifies dir holds a tokenizer.json and an ONNX model and
// returns the model's file name: model.onnx, or the only .onnx file there.
func checkModelDir(dir string) (string, error) {
	info, err := os.Stat(dir)
	if err != nil {
		return "", fmt.Errorf("embed: model dir: %w", err)
	}
	if !info.IsDir() {
		return "", fmt.Errorf("embed: model dir %s is not a directory", dir)
	}
	var missing []string
	if _, err := os.Stat(filepath.Join(dir, "tokenizer.json")); err != nil {
		missing = append(missing, "tokenizer.json")
	}
	onnxFile := "model.onnx"
	if _, err := os.Stat(filepath.Join(dir, onnxFile)); err != nil {
		found, _ := filepath.Glob(filepath.Join(dir, "*.onnx"))
		switch len(found) {
		case 1:
			onnxFile = filepath.Base(found[0])
		case 0:
			missing = append(missing, "model.onnx")
		default:
			return "", fmt.Errorf("embed: model dir %s has several .onnx files and no model.onnx; keep one or name it model.onnx", dir)
		}
	}
	if len(missing) > 0 {
		return "", fmt.Errorf("embed: model dir %s is missing %s (a sentence-transformer exported to ONNX, e.g. from `knowmind model pull intfloat/multilingual-e5-small`)", dir, strings.Join(missing, " and "))
	}
	return onnxFile, nil
}

// checkPooling refuses sentence-transformer folders whose pooling is not
// mean pooling: hugot pools by mean, and silently pooling differently would
// give plausible but wrong vectors.
func checkPooling(dir string) error {
	raw, err := os.ReadFile(filepath.Join(dir, "1_Pooling", "config.json"))
	if err != nil {
		return nil // no sentence-transformers pooling config: mean pooling is the convention
	}
	var pool map[string]any
	if err := json.Unmarshal(raw, &pool); err != nil {
		return fmt.Errorf("embed: %s/1_Pooling/config.json: %w", dir, err)
	}
	if pool["pooling_mode_mean_tokens"] == true {
		return nil
	}
	var modes []string
	for k, v := range pool {
		if strings.HasPrefix(k, "pooling_mode_") && v == true {
			modes = append(modes, strings.TrimPrefix(k, "pooling_mode_"))
		}
	}
	return fmt.Errorf("embed: model %s uses pooling %v, but the hugot provider only does mean pooling", dir, modes)
}

// maxPositionEmbeddings reads the model's token limit from config.json, or 0.
func maxPositionEmbeddings(dir string) int {
	raw, err := os.ReadFile(filepath.Join(dir, "config.json"))
	if err != nil {
		return 0
	}
	var cfg struct {
		MaxPositionEmbeddings int    `json:"max_position_embeddings"`
		ModelType             string `json:"model_type"`
	}
	if json.Unmarshal(raw, &cfg) != nil {
		return 0
	}
	// RoBERTa-family models (XLM-R, hence multilingual-e5) reserve two
	// positions: 514 means 512 usable tokens.
	if strings.Contains(cfg.ModelType, "roberta") && cfg.MaxPositionEmbeddings > 2 {
		return cfg.MaxPositionEmbeddings - 2
	}
	return cfg.MaxPositionEmbeddings
}

// modelFingerprint identifies the model's bytes cheaply (size, head and
// tail of the ONNX file, the whole tokenizer): the ID must change if the
// folder's content is swapped for another model under the same name.
func modelFingerprint(dir, onnxFile string) (string, error) {
	h := sha256.New()
	f, err := os.Open(filepath.Join(dir, onnxFile))
	if err != nil {
		return "", fmt.Errorf("embed: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return "", fmt.Errorf("embed: %w", err)
	}
	const part = 1 << 20
	fmt.Fprintf(h, "%d\n", info.Size())
	if _, err := io.CopyN(h, f, part); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("embed: read %s: %w", onnxFile, err)
	}
	if info.Size() > 2*part {
		if _, err := io.Copy(h, io.NewSectionReader(f, info.Size()-part, part)); err != nil {
			return "", fmt.Errorf("embed: read %s: %w", onnxFile, err)
		}
	}
	tok, err := os.ReadFile(filepath.Join(dir, "tokenizer.json"))
	if err != nil {
		return "", fmt.Errorf("embed: %w", err)
	}
	h.Write(tok)
	return hex.EncodeToString(h.Sum(nil))[:8], nil
}

// batchBuckets are powers of two up to batch, and batch itself.
func batchBuckets(batch int) []int {
	var b []int
	for n := 1; n < batch; n *= 2 {
		b = append(b, n)
	}
	return append(b, batch)
}

func sequenceBuckets(maxTokens int) []int {
	var b []int
	for _, n := range hugotSequenceBuckets {
		if n < maxTokens {
			b = append(b, n)
		}
	}
	return append(b, maxTokens)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cmp0 returns v, or def when v is zero.
func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// Pull downloads the model name (e.g. "intfloat/multilingual-e5-small") from
// the model hub (hugot's default, or HF_ENDPOINT) with hugot's downloader into a folder
// under dir and returns that folder, ready for Config.ModelDir. It prefers
// the repository's onnx/model.onnx, as sentence-transformers repositories
// carry several ONNX variants. It needs access to the model hub.
func Pull(ctx context.Context, name, dir string) (string, error) {
	if name == "" || dir == "" {
		return "", errors.New("embed: pull needs a model name and a target folder")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("embed: pull %s: %w", name, err)
	}
	type result struct {
		path string
		err  error
	}
	done := make(chan result, 1)
	go func() { // hugot's downloader takes no context; ctx only stops the wait
		download := func(onnxPath string) (string, error) {
			opts := hugot.NewDownloadOptions()
			opts.OnnxFilePath = onnxPath
			opts.MaxRetries = 2
			opts.RetryInterval = 1
			return hugot.DownloadModel(name, dir, opts)
		}
		path, err := download("onnx/model.onnx")
		if err != nil && strings.Contains(err.Error(), "not found at onnx/model.onnx") {
			path, err = download("")
		}
		done <- result{path, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			return "", fmt.Errorf("embed: pull %s from the model hub failed (is there internet access? Otherwise copy a folder with model.onnx and tokenizer.json here by hand): %w", name, r.err)
		}
		return r.path, nil
	case <-ctx.Done():
		return "", fmt.Errorf("embed: pull %s: %w", name, ctx.Err())
	}
}
