package embed

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeEmbeddingServer answers /v1/embeddings like Ollama or TEI would:
// 3-dimensional unnormalised vectors derived from the text length, listed in
// reverse order (the index field says where each belongs). fail, when set,
// may answer first.
type fakeEmbeddingServer struct {
	*httptest.Server
	calls atomic.Int32
	mu    sync.Mutex
	seen  []string // every input text received
	fail  func(call int32, w http.ResponseWriter) bool
}

func newFakeEmbeddingServer(t *testing.T) *fakeEmbeddingServer {
	f := &fakeEmbeddingServer{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		call := f.calls.Add(1)
		if f.fail != nil && f.fail(call, w) {
			return
		}
		if r.Method != http.MethodPost || r.URL.Path != "/v1/embeddings" {
			http.Error(w, `{"error":"not found"}`, http.StatusNotFound)
			return
		}
		if r.Header.Get("Authorization") != "Bearer secret" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":{"message":"invalid api key"}}`))
			return
		}
		var req openAIRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model == "" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.seen = append(f.seen, req.Input...)
		f.mu.Unlock()
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var resp struct {
			Data []item `json:"data"`
		}
		for i := len(req.Input) - 1; i >= 0; i-- {
			n := float32(len(req.Input[i]))
			resp.Data = append(resp.Data, item{i, []float32{n, 1, 2}})
		}
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(f.Close)
	return f
}

func newTestOpenAI(t *testing.T, url string, cfg Config) (*openAIEmbedder, error) {
	t.Helper()
	cfg.Provider, cfg.URL = ProviderOpenAI, url
	if cfg.Model == "" {
		cfg.Model = "nomic-embed-text"
	}
	if cfg.APIKey == "" {
		cfg.APIKey = "secret"
	}
	e, err := New(cfg)
	if err != nil {
		return nil, err
	}
	oe := e.(*openAIEmbedder)
	oe.backoff = time.Millisecond // keep retry tests fast
	return oe, nil
}

func TestOpenAIEmbeds(t *testing.T) {
	srv := newFakeEmbeddingServer(t)
	e, err := newTestOpenAI(t, srv.URL+"/v1/", Config{Batch: 4})
	if err != nil {
		t.Fatal(err)
	}
	if e.Dim() != 3 || e.ID() != "openai:nomic-embed-text:3" || e.Provider() != "openai-compatible" {
		t.Fatalf("Dim/ID/Provider = %d/%q/%q", e.Dim(), e.ID(), e.Provider())
	}
	texts := []string{"a", "bb", "ccc", "dddd", "eeeee", "ffffff", "g", "hh", "iii", "jjjj"}
	calls := srv.calls.Load()
	vecs, err := e.EmbedPassages(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if got := srv.calls.Load() - calls; got != 3 {
		t.Errorf("10 texts in batches of 4 took %d requests, want 3", got)
	}
	for i, text := range texts {
		want := []float32{float32(len(text)), 1, 2}
		normalize(want)
		assertClose(t, vecs[i], want, 1e-6, text)
	}
}

func TestOpenAIE5Prefixes(t *testing.T) {
	srv := newFakeEmbeddingServer(t)
	e, err := newTestOpenAI(t, srv.URL, Config{Model: "intfloat/multilingual-e5-large", Dim: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.EmbedQuery(ctx, "Urlaub"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.EmbedPassages(ctx, []string{"Urlaub"}); err != nil {
		t.Fatal(err)
	}
	if strings.Join(srv.seen, "|") != "query: Urlaub|passage: Urlaub" {
		t.Fatalf("server saw %q", srv.seen)
	}
}

func TestOpenAIRetries(t *testing.T) {
	t.Run("5xx then success", func(t *testing.T) {
		srv := newFakeEmbeddingServer(t)
		srv.fail = func(call int32, w http.ResponseWriter) bool {
			if call <= 2 {
				http.Error(w, "model loading", http.StatusServiceUnavailable)
				return true
			}
			return false
		}
		e, err := newTestOpenAI(t, srv.URL, Config{Dim: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.EmbedQuery(context.Background(), "x"); err != nil {
			t.Fatalf("did not recover after two 503s: %v", err)
		}
		if srv.calls.Load() != 3 {
			t.Fatalf("%d calls, want 3", srv.calls.Load())
		}
	})
	t.Run("429 then success", func(t *testing.T) {
		srv := newFakeEmbeddingServer(t)
		srv.fail = func(call int32, w http.ResponseWriter) bool {
			if call == 1 {
				w.WriteHeader(http.StatusTooManyRequests)
				return true
			}
			return false
		}
		e, err := newTestOpenAI(t, srv.URL, Config{Dim: 3})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.EmbedQuery(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("gives up after 3 retries", func(t *testing.T) {
		srv := newFakeEmbeddingServer(t)
		srv.fail = func(call int32, w http.ResponseWriter) bool {
			w.WriteHeader(http.StatusInternalServerError)
			w.Write([]byte(`{"error":"CUDA out of memory"}`))
			return true
		}
		e, err := newTestOpenAI(t, srv.URL, Config{Dim: 3})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.EmbedQuery(context.Background(), "x")
		if err == nil || !strings.Contains(err.Error(), "HTTP 500: CUDA out of memory (after 4 attempts)") {
			t.Fatalf("err = %v", err)
		}
		if srv.calls.Load() != 4 {
			t.Fatalf("%d calls, want 4", srv.calls.Load())
		}
	})
	t.Run("4xx is not retried", func(t *testing.T) {
		srv := newFakeEmbeddingServer(t)
		e, err := newTestOpenAI(t, srv.URL, Config{Dim: 3, APIKey: "wrong"})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.EmbedQuery(context.Background(), "x")
		if err == nil || !strings.Contains(err.Error(), "HTTP 401: invalid api key") {
			t.Fatalf("err = %v", err)
		}
		if srv.calls.Load() != 1 {
			t.Fatalf("%d calls, want 1", srv.calls.Load())
		}
	})
	t.Run("timeout", func(t *testing.T) {
		srv := newFakeEmbeddingServer(t)
		srv.fail = func(call int32, w http.ResponseWriter) bool {
			time.Sleep(200 * time.Millisecond)
			return false
		}
		e, err := newTestOpenAI(t, srv.URL, Config{Dim: 3, Timeout: 20 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		_, err = e.EmbedQuery(context.Background(), "x")
		if err == nil || !strings.Contains(err.Error(), "deadline exceeded") {
			t.Fatalf("err = %v", err)
		}
	})
}

func TestOpenAIBadConfig(t *testing.T) {
	srv := newFakeEmbeddingServer(t)
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no url", Config{Provider: "openai", Model: "m"}, "needs URL"},
		{"bad url", Config{Provider: "openai", URL: "localhost:11434", Model: "m"}, "must start with http"},
		{"no model", Config{Provider: "openai", URL: srv.URL}, "needs Model"},
		{"probe fails", Config{Provider: "openai", URL: srv.URL, Model: "m", APIKey: "wrong"}, "HTTP 401: invalid api key (New asks the server once"},
		{"server down", Config{Provider: "openai", URL: "http://127.0.0.1:1", Model: "m", Timeout: time.Second}, "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
