package embed

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind/internal/onnxtest"
)

func newTinyHugot(t testing.TB, name string, cfg Config) Embedder {
	t.Helper()
	cfg.Provider = ProviderHugot
	cfg.ModelDir = tinyModelDir(t, name)
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

func TestHugotTinyModel(t *testing.T) {
	ctx := context.Background()
	e := newTinyHugot(t, "tiny-minilm", Config{Batch: 4})

	if e.Dim() != tinyDim {
		t.Fatalf("Dim = %d, want %d", e.Dim(), tinyDim)
	}
	if e.Provider() != "hugot" || !strings.HasPrefix(e.ID(), "hugot:tiny-minilm@") {
		t.Fatalf("Provider/ID = %q/%q", e.Provider(), e.ID())
	}

	texts := []string{
		"the cat sat on the mat",
		"the cat sits on the mat",
		"quarterly revenue grew by twelve percent",
		"",
		"a much longer sentence that needs many more word pieces than the others in this batch, so padding matters",
		"Einarbeitung neuer Mitarbeiter",
	}
	batch, err := e.EmbedPassages(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(batch) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(batch), len(texts))
	}
	for i, v := range batch {
		if len(v) != tinyDim {
			t.Fatalf("vector %d has %d dims", i, len(v))
		}
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("vector %d has norm %v", i, n)
		}
	}

	t.Run("deterministic", func(t *testing.T) {
		again, err := e.EmbedPassages(ctx, texts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range texts {
			assertClose(t, again[i], batch[i], 0, texts[i])
		}
	})

	t.Run("batch equals single", func(t *testing.T) {
		// Batches of 4 split the 6 texts in two and pad them differently;
		// a text alone is a batch of one with its own sequence length.
		for i, text := range texts {
			single, err := e.EmbedPassages(ctx, []string{text})
			if err != nil {
				t.Fatal(err)
			}
			assertClose(t, single[0], batch[i], 1e-6, text)
		}
	})

	t.Run("similar closer than unrelated", func(t *testing.T) {
		similar := cosine(batch[0], batch[1])
		unrelated := cosine(batch[0], batch[2])
		if similar <= unrelated {
			t.Fatalf("cos(cat, cat) = %.3f not above cos(cat, revenue) = %.3f", similar, unrelated)
		}
	})

	t.Run("query equals passage without prefixes", func(t *testing.T) {
		q, err := e.EmbedQuery(ctx, texts[0])
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, q, batch[0], 1e-6, texts[0])
	})

	t.Run("huge input is cut, not fatal", func(t *testing.T) {
		huge := strings.Repeat("Mitarbeiter lernen das Wiki kennen. ", 30000) // ~1,000,000 characters
		start := time.Now()
		v, err := e.EmbedQuery(ctx, huge)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(norm(v)-1) > 1e-5 || time.Since(start) > 5*time.Second {
			t.Fatalf("norm %v after %v", norm(v), time.Since(start))
		}
	})

	t.Run("cancelled context", func(t *testing.T) {
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := e.EmbedPassages(cancelled, texts); err == nil {
			t.Fatal("embedding with a cancelled context succeeded")
		}
	})

	t.Run("closed", func(t *testing.T) {
		e2 := newTinyHugot(t, "tiny-closed", Config{})
		if err := e2.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := e2.EmbedQuery(ctx, "x"); err == nil || !strings.Contains(err.Error(), "closed") {
			t.Fatalf("err = %v, want closed", err)
		}
	})
}

func TestHugotConcurrentBatches(t *testing.T) {
	ctx := context.Background()
	e := newTinyHugot(t, "tiny-concurrent", Config{Batch: 3, Concurrency: 4})
	texts := benchTexts(20)
	got, err := e.EmbedPassages(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, text := range texts {
		single, err := e.EmbedQuery(ctx, text)
		if err != nil {
			t.Fatal(err)
		}
		assertClose(t, single, got[i], 1e-6, text)
	}
}

func TestHugotE5Prefixes(t *testing.T) {
	ctx := context.Background()
	// Same weights (same seed) under two names: only the e5 one prefixes.
	e5 := newTinyHugot(t, "multilingual-e5-tiny", Config{})
	plain := newTinyHugot(t, "plain-tiny", Config{})

	q, err := e5.EmbedQuery(ctx, "wie beantrage ich Urlaub")
	if err != nil {
		t.Fatal(err)
	}
	p, err := e5.EmbedPassages(ctx, []string{"wie beantrage ich Urlaub"})
	if err != nil {
		t.Fatal(err)
	}
	if cosine(q, p[0]) > 0.9999 {
		t.Fatal("e5 query and passage vectors are identical: prefixes not applied")
	}
	want, err := plain.EmbedPassages(ctx, []string{"query: wie beantrage ich Urlaub", "passage: wie beantrage ich Urlaub"})
	if err != nil {
		t.Fatal(err)
	}
	assertClose(t, q, want[0], 1e-6, "query prefix")
	assertClose(t, p[0], want[1], 1e-6, "passage prefix")

	if qp, pp := prefixes(Config{}, "intfloat/e5-large-v2"); qp != "query: " || pp != "passage: " {
		t.Errorf("e5-large-v2 prefixes = %q, %q", qp, pp)
	}
	if qp, pp := prefixes(Config{}, "sentence-transformers/all-MiniLM-L6-v2", "/models/bge5x"); qp != "" || pp != "" {
		t.Errorf("non-e5 model got prefixes %q, %q", qp, pp)
	}
	if qp, _ := prefixes(Config{QueryPrefix: "search_query: "}, "e5"); qp != "search_query: " {
		t.Errorf("explicit prefix overridden: %q", qp)
	}
}

func TestHugotBadConfig(t *testing.T) {
	good := tinyModelDir(t, "good")
	noModel := filepath.Join(t.TempDir(), "no-model")
	noTokenizer := filepath.Join(t.TempDir(), "no-tokenizer")
	os.MkdirAll(noModel, 0o755)
	os.MkdirAll(noTokenizer, 0o755)
	copyFile(t, filepath.Join(good, "tokenizer.json"), filepath.Join(noModel, "tokenizer.json"))
	copyFile(t, filepath.Join(good, "model.onnx"), filepath.Join(noTokenizer, "model.onnx"))
	meanPooling := filepath.Join(t.TempDir(), "cls")
	os.MkdirAll(filepath.Join(meanPooling, "1_Pooling"), 0o755)
	copyFile(t, filepath.Join(good, "tokenizer.json"), filepath.Join(meanPooling, "tokenizer.json"))
	copyFile(t, filepath.Join(good, "model.onnx"), filepath.Join(meanPooling, "model.onnx"))
	os.WriteFile(filepath.Join(meanPooling, "1_Pooling", "config.json"), []byte(`{"pooling_mode_cls_token": true, "pooling_mode_mean_tokens": false}`), 0o644)

	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no dir", Config{Provider: "hugot"}, "needs ModelDir"},
		{"dir does not exist", Config{Provider: "hugot", ModelDir: "/nonexistent/model"}, "no such file"},
		{"no model.onnx", Config{Provider: "hugot", ModelDir: noModel}, "missing model.onnx"},
		{"no tokenizer.json", Config{Provider: "hugot", ModelDir: noTokenizer}, "missing tokenizer.json"},
		{"cls pooling", Config{Provider: "hugot", ModelDir: meanPooling}, "only does mean pooling"},
		{"wrong dim", Config{Provider: "hugot", ModelDir: good, Dim: 384}, "gives 32 dimensions, but Dim is set to 384"},
		{"unknown provider", Config{Provider: "word2vec"}, `unknown provider "word2vec"`},
		{"negative batch", Config{Batch: -1}, "must not be negative"},
		{"tiny hash dim", Config{Dim: 8}, "out of range"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := New(tc.cfg)
			if err == nil {
				e.Close()
				t.Fatalf("New(%+v) succeeded", tc.cfg)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

func TestPullFailsClearly(t *testing.T) {
	// A stand-in for the model hub that knows no model: the test behaves
	// the same with and without internet.
	hub := httptest.NewServer(http.NotFoundHandler())
	defer hub.Close()
	t.Setenv("HF_ENDPOINT", hub.URL)
	t.Setenv("XDG_CACHE_HOME", t.TempDir())

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := Pull(ctx, "intfloat/multilingual-e5-small", t.TempDir())
	if err == nil {
		t.Fatal("Pull succeeded against an empty hub")
	}
	if !strings.Contains(err.Error(), "pull intfloat/multilingual-e5-small from the model hub failed") {
		t.Fatalf("unclear error: %v", err)
	}
	t.Log(err)

	if _, err := Pull(ctx, "", "x"); err == nil {
		t.Fatal("Pull without a name succeeded")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func cosine(a, b []float32) float64 {
	var dot float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
	}
	return dot / (norm(a) * norm(b))
}

func assertClose(t *testing.T, got, want []float32, tol float64, what string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%q: %d dims vs %d", what, len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i]-want[i])) > tol {
			t.Fatalf("%q: component %d is %v, want %v (±%g)", what, i, got[i], want[i], tol)
		}
	}
}

func TestHugotIDFollowsModelBytes(t *testing.T) {
	dir := tinyModelDir(t, "same-name")
	before, err := modelFingerprint(dir, "model.onnx")
	if err != nil {
		t.Fatal(err)
	}
	// Another model under the same folder name must not pass for the first.
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), onnxtest.Embedder(tinyVocab, tinyDim, 43), 0o644); err != nil {
		t.Fatal(err)
	}
	after, err := modelFingerprint(dir, "model.onnx")
	if err != nil {
		t.Fatal(err)
	}
	if before == after {
		t.Fatalf("fingerprint %s unchanged after swapping the model", before)
	}
}
