package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/knowmind/knowmind/internal/runes"
)

// openAIEmbedder calls an OpenAI-compatible POST /v1/embeddings endpoint
// (OpenAI, Ollama, Hugging Face TEI, vLLM, LocalAI, …).
type openAIEmbedder struct {
	client   *http.Client
	endpoint string
	model    string
	apiKey   string
	timeout  time.Duration

	id                         string
	dim                        int
	batch, concurrency         int
	queryPrefix, passagePrefix string

	retries int
	backoff time.Duration // first retry delay, doubled each time
}

func newOpenAI(cfg Config) (Embedder, error) {
	if cfg.URL == "" {
		return nil, errors.New("embed: openai provider needs URL, the server's base URL (e.g. http://localhost:11434 for Ollama)")
	}
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("embed: openai URL %q must start with http:// or https://", cfg.URL)
	}
	if cfg.Model == "" {
		return nil, errors.New("embed: openai provider needs Model, the embedding model's name on the server")
	}
	base := strings.TrimRight(cfg.URL, "/")
	base = strings.TrimSuffix(base, "/v1")
	e := &openAIEmbedder{
		client:      &http.Client{},
		endpoint:    base + "/v1/embeddings",
		model:       cfg.Model,
		apiKey:      cfg.APIKey,
		timeout:     cfg.Timeout,
		batch:       cmp0(cfg.Batch, DefaultBatch),
		concurrency: cmp0(cfg.Concurrency, 2),
		retries:     3,
		backoff:     500 * time.Millisecond,
		dim:         cfg.Dim,
	}
	if e.timeout == 0 {
		e.timeout = DefaultTimeout
	}
	e.queryPrefix, e.passagePrefix = prefixes(cfg, cfg.Model)
	if e.dim == 0 {
		ctx, cancel := context.WithTimeout(context.Background(), e.timeout)
		defer cancel()
		vecs, err := e.call(ctx, []string{e.passagePrefix + "dimension probe"})
		if err != nil {
			return nil, fmt.Errorf("%w (New asks the server once for the dimension; set Dim to skip that)", err)
		}
		e.dim = len(vecs[0])
	}
	e.id = fmt.Sprintf("openai:%s:%d", cfg.Model, e.dim)
	return e, nil
}

func (e *openAIEmbedder) ID() string       { return e.id }
func (e *openAIEmbedder) Provider() string { return "openai-compatible" }
func (e *openAIEmbedder) Dim() int         { return e.dim }
func (e *openAIEmbedder) Close() error     { e.client.CloseIdleConnections(); return nil }

func (e *openAIEmbedder) EmbedPassages(ctx context.Context, texts []string) ([][]float32, error) {
	return e.embed(ctx, e.passagePrefix, texts)
}

func (e *openAIEmbedder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	vecs, err := e.embed(ctx, e.queryPrefix, []string{text})
	if err != nil {
		return nil, err
	}
	return vecs[0], nil
}

func (e *openAIEmbedder) embed(ctx context.Context, prefix string, texts []string) ([][]float32, error) {
	vecs, err := inBatches(ctx, withPrefix(prefix, texts), e.batch, e.concurrency, e.call)
	if err != nil {
		return nil, err
	}
	if err := checkDims(vecs, e.dim); err != nil {
		return nil, fmt.Errorf("%w (server %s, model %s)", err, e.endpoint, e.model)
	}
	return vecs, nil
}

type openAIRequest struct {
	Model string   `json:"model"`
	Input []string `json:"input"`
}

type openAIResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// call sends one batch, retrying transport errors, 429 and 5xx with
// exponential backoff (or the server's Retry-After).
func (e *openAIEmbedder) call(ctx context.Context, texts []string) ([][]float32, error) {
	body, err := json.Marshal(openAIRequest{Model: e.model, Input: texts})
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	delay := e.backoff
	for attempt := 0; ; attempt++ {
		vecs, retryAfter, err := e.post(ctx, body, len(texts))
		if err == nil {
			return vecs, nil
		}
		var permanent *permanentError
		if errors.As(err, &permanent) || attempt == e.retries || ctx.Err() != nil {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return nil, err
		}
		wait := delay
		if retryAfter > 0 {
			wait = min(retryAfter, 30*time.Second)
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return nil, fmt.Errorf("%w; stopped retrying: %w", err, ctx.Err())
		}
		delay *= 2
	}
}

// permanentError marks failures a retry cannot fix (4xx other than 429,
// unreadable responses).
type permanentError struct{ err error }

func (p *permanentError) Error() string { return p.err.Error() }
func (p *permanentError) Unwrap() error { return p.err }

func (e *openAIEmbedder) post(ctx context.Context, body []byte, n int) ([][]float32, time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, 0, &permanentError{fmt.Errorf("embed: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	if e.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.apiKey)
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("embed: POST %s: %w", e.endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("embed: read response from %s: %w", e.endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("embed: POST %s (model %s): HTTP %d: %s", e.endpoint, e.model, resp.StatusCode, serverMessage(raw))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
			return nil, retryAfter(resp.Header.Get("Retry-After")), err
		}
		return nil, 0, &permanentError{err}
	}
	var parsed openAIResponse
	if err := json.Unmarshal(raw, &parsed); err != nil {
		return nil, 0, &permanentError{fmt.Errorf("embed: %s answered with something other than an embeddings response: %w", e.endpoint, err)}
	}
	if len(parsed.Data) != n {
		return nil, 0, &permanentError{fmt.Errorf("embed: %s returned %d embeddings for %d texts", e.endpoint, len(parsed.Data), n)}
	}
	sort.SliceStable(parsed.Data, func(i, j int) bool { return parsed.Data[i].Index < parsed.Data[j].Index })
	vecs := make([][]float32, n)
	for i, d := range parsed.Data {
		if len(d.Embedding) == 0 {
			return nil, 0, &permanentError{fmt.Errorf("embed: %s returned an empty embedding", e.endpoint)}
		}
		vecs[i] = d.Embedding
	}
	return vecs, 0, nil
}

// serverMessage extracts the error text of an OpenAI-style ({"error":
// {"message": …}}) or Ollama/TEI-style ({"error": "…"}) body, or a short
// excerpt of anything else.
func serverMessage(raw []byte) string {
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 {
		var s string
		if json.Unmarshal(body.Error, &s) == nil {
			return s
		}
		var obj struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(body.Error, &obj) == nil && obj.Message != "" {
			return obj.Message
		}
	}
	msg := strings.TrimSpace(string(raw))
	if short := runes.Cut(msg, 300); short != msg {
		msg = short + "…"
	}
	if msg == "" {
		msg = "(empty body)"
	}
	return msg
}

func retryAfter(h string) time.Duration {
	if secs, err := strconv.Atoi(strings.TrimSpace(h)); err == nil && secs > 0 {
		return time.Duration(secs) * time.Second
	}
	return 0
}
