package embed

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/knowmind/knowmind/internal/onnxtest"
)

// The test model is a real ONNX cross-encoder that hugot loads and runs like any other: a
// Gather looks up one weight per token ([vocab × 1]), ReduceMean averages them over the
// sequence, giving one logit per (query, passage) pair, shape [batch, 1]. Every weight is 0
// except the token "zebra"'s, so a passage mentioning zebras is the relevant one. It is
// generated at test time so no binary model is committed; the tokenizer is embed's test copy
// of all-MiniLM-L6-v2's (BERT WordPiece, [SEP] between query and passage).

// tinyCrossEncoder writes the model folder and returns its path.
func tinyCrossEncoder(t testing.TB) string {
	t.Helper()
	tok, err := os.ReadFile("testdata/tokenizer.json")
	if err != nil {
		t.Skip("tokenizer not found:", err)
	}
	var parsed struct {
		Model struct {
			Vocab map[string]int `json:"vocab"`
		} `json:"model"`
	}
	if err := json.Unmarshal(tok, &parsed); err != nil {
		t.Fatal(err)
	}
	zebra, ok := parsed.Model.Vocab["zebra"]
	if !ok {
		t.Fatal("no zebra in the vocabulary")
	}
	dir := filepath.Join(t.TempDir(), "tiny-cross-encoder")
	files := map[string][]byte{
		"tokenizer.json":          tok,
		"special_tokens_map.json": []byte(`{"sep_token": "[SEP]", "cls_token": "[CLS]", "pad_token": "[PAD]"}`),
		"config.json":             []byte(`{"max_position_embeddings": 512, "pad_token_id": 0}`),
		"model.onnx":              onnxtest.CrossEncoder(len(parsed.Model.Vocab), zebra),
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestCrossEncoderScoresRelevantPassageHighest(t *testing.T) {
	c, err := NewCrossEncoder(tinyCrossEncoder(t))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Name() != "hugot:tiny-cross-encoder" {
		t.Fatalf("name = %q", c.Name())
	}
	passages := []string{
		"The savanna is home to lions and elephants.",
		"A zebra has black and white stripes.",
		"Horses are domesticated animals.",
	}
	scores, err := c.Score(context.Background(), "which animal has stripes", passages)
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 3 {
		t.Fatalf("scores = %v", scores)
	}
	for _, s := range scores {
		if s < 0 || s > 1 {
			t.Fatalf("scores must be probabilities: %v", scores)
		}
	}
	// Input order is kept; the zebra passage wins, the others score sigmoid(0) = 0.5.
	if !(scores[1] > scores[0] && scores[1] > scores[2]) || math.Abs(scores[0]-0.5) > 1e-6 {
		t.Fatalf("scores = %v, want the zebra passage highest and the others 0.5", scores)
	}
	if s, err := c.Score(context.Background(), "q", nil); err != nil || s != nil {
		t.Fatalf("no passages: %v %v", s, err)
	}
}

func TestNewCrossEncoderRejectsIncompleteFolder(t *testing.T) {
	if _, err := NewCrossEncoder(t.TempDir()); err == nil {
		t.Fatal("want an error for a folder without a model")
	}
}
