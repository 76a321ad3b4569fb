package embed

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/knights-analytics/hugot"
	"github.com/knights-analytics/hugot/pipelines"

	"github.com/knowmind/knowmind/internal/runes"
)

// A cross-encoder scores (query, passage) pairs, run in-process by hugot's pure-Go backend like
// the hugot embedder, for recall's final ordering (graph.Reranker). It reads query and passage
// together, so it judges relevance far better than the first-stage signals — at the price of
// one model run per candidate, which is why recall reranks only its top candidates.
//
// The model folder holds model.onnx (a sequence-classification export with one logit per pair,
// e.g. cross-encoder/ms-marco-MiniLM-L6-v2 or jina-reranker-v1-tiny-en), tokenizer.json and
// special_tokens_map.json (its sep_token tells hugot how pairs are joined), optionally
// config.json (max_position_embeddings).

// crossEncoderMaxTokens bounds query + passage; longer passages are cut (a chunk is what
// matched).
const crossEncoderMaxTokens = 512

// CrossEncoder is a loaded cross-encoder. Safe for concurrent use: hugot pipelines are not
// documented as reentrant, so calls are serialised (the Go backend uses every core per call).
type CrossEncoder struct {
	mu       sync.Mutex
	session  *hugot.Session
	pipeline *pipelines.CrossEncoderPipeline
	name     string
}

// NewCrossEncoder loads the cross-encoder in dir.
func NewCrossEncoder(dir string) (*CrossEncoder, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("cross-encoder: model dir %q: %w", dir, err)
	}
	for _, f := range []string{"model.onnx", "tokenizer.json", "special_tokens_map.json"} {
		if _, err := os.Stat(filepath.Join(abs, f)); err != nil {
			return nil, fmt.Errorf("cross-encoder: model dir %s: %w (want model.onnx, tokenizer.json, special_tokens_map.json)", abs, err)
		}
	}
	session, err := newGoSession([]int{1, 2, 4, 8, 16, 32}, []int{32, 64, 128, 256, 512})
	if err != nil {
		return nil, fmt.Errorf("cross-encoder: start hugot session: %w", err)
	}
	p, err := hugot.NewPipeline(session, hugot.CrossEncoderConfig{
		ModelPath: abs,
		Name:      "rerank",
		Options: []hugot.CrossEncoderOption{
			pipelines.WithBatchSize(16),
			pipelines.WithSortResults(false), // keep the input order: the caller maps scores back
		},
	})
	if err != nil {
		return nil, errors.Join(fmt.Errorf("cross-encoder: load model %s: %w", abs, err), session.Destroy())
	}
	if tk := p.Model.Tokenizer; tk != nil && (tk.MaxAllowedTokens == 0 || tk.MaxAllowedTokens > crossEncoderMaxTokens) {
		tk.MaxAllowedTokens = crossEncoderMaxTokens
	}
	return &CrossEncoder{session: session, pipeline: p, name: "hugot:" + filepath.Base(abs)}, nil
}

// Name identifies the model in recall's "rerank" field.
func (c *CrossEncoder) Name() string { return c.name }

// Score returns, for each passage, the model's relevance probability for query (the sigmoid of
// its logit, 0..1), in the passages' order.
func (c *CrossEncoder) Score(ctx context.Context, query string, passages []string) ([]float64, error) {
	if len(passages) == 0 {
		return nil, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	docs := make([]string, len(passages))
	for i, p := range passages {
		docs[i] = runes.Cut(strings.TrimSpace(p), crossEncoderMaxTokens*8)
	}
	c.mu.Lock()
	out, err := c.pipeline.RunPipeline(query, docs)
	c.mu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("cross-encoder: %w", err)
	}
	scores := make([]float64, len(passages))
	for _, r := range out.Results {
		if r.Index < 0 || r.Index >= len(scores) {
			return nil, fmt.Errorf("cross-encoder: result index %d out of range", r.Index)
		}
		scores[r.Index] = float64(r.Score)
	}
	return scores, nil
}

// Close releases the model.
func (c *CrossEncoder) Close() error { return c.session.Destroy() }
