package embed

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/knowmind/knowmind/internal/onnxtest"
)

// The tiny model is a real ONNX sentence transformer that hugot loads and runs
// (internal/onnxtest.Embedder): texts sharing tokens get similar vectors.

const (
	tinyVocab = 30522 // all-MiniLM-L6-v2's WordPiece vocabulary (testdata/tokenizer.json)
	tinyDim   = 32
)

// tinyModelDir writes a model folder named name (the name matters: "e5" in
// it switches on prefixes) and returns its path.
func tinyModelDir(t testing.TB, name string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	tok, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tokenizer.json"), tok, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), onnxtest.Embedder(tinyVocab, tinyDim, 42), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
