// Package embed turns text into L2-normalised float32 vectors for the graph's
// HNSW index. It holds the Embedder interface and three providers:
//
//   - "hash" (the default, Provider "knowmind-hash"): built in, offline, no
//     download. It hashes normalised words and character 3–5-grams into a
//     dense vector. It is LEXICAL, NOT SEMANTIC: texts are close when they share
//     words, word stems or word fragments (with light German/English handling:
//     umlaut folding, common inflection suffixes), not when they mean the same
//     thing in different words ("car" and "automobile" are unrelated to it).
//   - "hugot": a sentence-transformer ONNX model folder (model.onnx +
//     tokenizer.json) run in-process by hugot's pure-Go backend, mean pooled
//     and L2-normalised, with e5-style "query: "/"passage: " prefixes.
//   - "openai": any OpenAI-compatible /v1/embeddings server (Ollama, TEI, …).
//
// Each embedder has an ID that changes whenever its vectors would change
// (model, dimension, algorithm version); the caller records it with the
// vectors and must refuse to mix vectors of different IDs.
//
// It also holds the cross-encoder recall reranks with (CrossEncoder, crossencoder.go): a hugot
// model like the hugot embedder, sharing its session set-up.
//
// This package knows nothing of Dgraph, tenants, MCP or HTTP handlers.
package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Embedder turns texts into vectors. Implementations are safe for concurrent use.
type Embedder interface {
	// ID is a stable identifier recorded in the graph next to the vectors,
	// e.g. "hash-v1-384" or "hugot:intfloat/multilingual-e5-small@1a2b3c4d".
	// Anything that changes the vectors (model, dimension, version) changes it.
	ID() string
	// Provider is the honest short name reported as `embedding_provider`:
	// "knowmind-hash", "hugot" or "openai-compatible".
	Provider() string
	// Dim is the length of every vector this embedder returns.
	Dim() int
	// EmbedPassages embeds texts to be stored; the result has the same order
	// and length as texts, each vector L2-normalised.
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
	// EmbedQuery embeds a search query (models like e5 embed queries and
	// passages differently).
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	// Close releases the model or connections; the embedder is unusable after.
	Close() error
}

// Provider names accepted in Config.Provider.
const (
	ProviderHash   = "hash"
	ProviderHugot  = "hugot"
	ProviderOpenAI = "openai"
)

// Config selects and tunes an embedder. The zero value gives the hash
// embedder with 384 dimensions.
type Config struct {
	Provider string // "hash" (default), "hugot" or "openai"

	ModelDir string // hugot: folder holding model.onnx and tokenizer.json
	URL      string // openai: server base URL, e.g. http://localhost:11434 (with or without /v1)
	// Model names the model. openai: sent as "model" (required). hugot: the
	// name recorded in the ID (default: the folder's base name).
	Model  string
	APIKey string // openai: sent as a Bearer token when set

	// Dim is the vector length. hash: default 384. hugot and openai: the
	// expected length; 0 means take it from the model (hugot) or probe the
	// server once at New (openai); a mismatch is an error.
	Dim int

	Batch       int           // texts per model call; default 32
	Concurrency int           // model calls in flight at once; default 1 (hugot's Go backend already uses all cores), 2 (openai)
	Timeout     time.Duration // openai: per request, default 60s
	MaxTokens   int           // hugot: tokens kept per text; default 512 or the model's limit if smaller

	// QueryPrefix and PassagePrefix are prepended before embedding (hugot,
	// openai). When both are empty and the model name or folder contains an
	// "e5" component, e5's "query: " and "passage: " are used.
	QueryPrefix   string
	PassagePrefix string
}

// Defaults for Config fields left zero.
const (
	DefaultHashDim     = 384
	DefaultBatch       = 32
	DefaultTimeout     = 60 * time.Second
	DefaultMaxTokens   = 512
	defaultConcurrency = 1
)

// New builds the embedder that cfg selects. Errors name the setting at fault.
func New(cfg Config) (Embedder, error) {
	if cfg.Dim < 0 || cfg.Batch < 0 || cfg.Concurrency < 0 || cfg.Timeout < 0 || cfg.MaxTokens < 0 {
		return nil, errors.New("embed: Dim, Batch, Concurrency, Timeout and MaxTokens must not be negative")
	}
	switch strings.ToLower(strings.TrimSpace(cfg.Provider)) {
	case "", ProviderHash:
		return NewHash(cfg.Dim)
	case ProviderHugot:
		return newHugot(cfg)
	case ProviderOpenAI:
		return newOpenAI(cfg)
	default:
		return nil, fmt.Errorf("embed: unknown provider %q (want %q, %q or %q)", cfg.Provider, ProviderHash, ProviderHugot, ProviderOpenAI)
	}
}

// e5Name matches model names such as "intfloat/multilingual-e5-small" or
// "e5-large-v2", but not names that merely contain the letters "e5".
var e5Name = regexp.MustCompile(`(^|[^a-z0-9])e5([^a-z0-9]|$)`)

// prefixes returns the query and passage prefixes for cfg, auto-detecting
// e5 models from any of names.
func prefixes(cfg Config, names ...string) (query, passage string) {
	if cfg.QueryPrefix != "" || cfg.PassagePrefix != "" {
		return cfg.QueryPrefix, cfg.PassagePrefix
	}
	for _, n := range names {
		if e5Name.MatchString(strings.ToLower(n)) {
			return "query: ", "passage: "
		}
	}
	return "", ""
}

// withPrefix returns texts with prefix prepended, or texts itself when
// there is no prefix.
func withPrefix(prefix string, texts []string) []string {
	if prefix == "" {
		return texts
	}
	out := make([]string, len(texts))
	for i, t := range texts {
		out[i] = prefix + t
	}
	return out
}

// normalize scales v to unit L2 length in place. A zero or non-finite
// vector cannot be normalised: storing it would poison cosine search.
func normalize(v []float32) error {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return errors.New("embed: model returned a zero or non-finite vector")
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return nil
}

// inBatches calls embedBatch on consecutive slices of at most batch texts,
// at most concurrency at once, and assembles the results in order. It stops
// at the first error or when ctx ends. A panic inside embedBatch (model
// backends use them) becomes an error instead of killing the server.
func inBatches(ctx context.Context, texts []string, batch, concurrency int,
	embedBatch func(ctx context.Context, texts []string) ([][]float32, error)) ([][]float32, error) {
	out := make([][]float32, len(texts))
	if len(texts) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		slots    = make(chan struct{}, concurrency)
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
			cancel()
		}
		mu.Unlock()
	}
	for start := 0; start < len(texts); start += batch {
		end := min(start+batch, len(texts))
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func(start, end int) {
			defer wg.Done()
			defer func() { <-slots }()
			defer func() {
				if r := recover(); r != nil {
					fail(fmt.Errorf("embed: model backend panicked: %v", r))
				}
			}()
			vecs, err := embedBatch(ctx, texts[start:end])
			if err != nil {
				fail(err)
				return
			}
			if len(vecs) != end-start {
				fail(fmt.Errorf("embed: model returned %d vectors for %d texts", len(vecs), end-start))
				return
			}
			copy(out[start:end], vecs)
		}(start, end)
	}
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	return out, nil
}

// checkDims verifies every vector has dim entries and normalises it.
func checkDims(vecs [][]float32, dim int) error {
	for i, v := range vecs {
		if len(v) != dim {
			return fmt.Errorf("embed: vector %d has %d dimensions, want %d", i, len(v), dim)
		}
		if err := normalize(v); err != nil {
			return fmt.Errorf("%w (text %d)", err, i)
		}
	}
	return nil
}
