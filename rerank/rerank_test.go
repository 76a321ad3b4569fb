package rerank

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
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
	tok, err := os.ReadFile("../embed/testdata/tokenizer.json")
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
		"model.onnx":              crossEncoderONNX(len(parsed.Model.Vocab), zebra),
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
	c, err := New(tinyCrossEncoder(t))
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

func TestNewRejectsIncompleteFolder(t *testing.T) {
	if _, err := New(t.TempDir()); err == nil {
		t.Fatal("want an error for a folder without a model")
	}
}

// crossEncoderONNX encodes the ModelProto by hand (field numbers from onnx.proto).
func crossEncoderONNX(vocab, hot int) []byte {
	table := make([]byte, 0, vocab*4)
	for i := range vocab {
		w := float32(0)
		if i == hot {
			w = 40 // averaged over a padded sequence of up to ~32 tokens: still a clear logit
		}
		table = binary.LittleEndian.AppendUint32(table, math.Float32bits(w))
	}
	const (
		typeFloat = 1
		typeInt64 = 7
		attrInt   = 2
		attrInts  = 7
	)
	tensor := msg(
		varints(1, int64(vocab), 1), // dims
		varints(2, typeFloat),       // data_type
		str(8, "weights"),           // name
		bytesField(9, table),        // raw_data
	)
	gather := msg(str(1, "weights"), str(1, "input_ids"), str(2, "token_weights"), str(3, "lookup"), str(4, "Gather"))
	reduce := msg(str(1, "token_weights"), str(2, "logits"), str(3, "mean"), str(4, "ReduceMean"),
		bytesField(5, msg(str(1, "axes"), varints(8, 1), varints(20, attrInts))),
		bytesField(5, msg(str(1, "keepdims"), varints(3, 0), varints(20, attrInt))),
	)
	graph := msg(
		bytesField(1, gather),
		bytesField(1, reduce),
		str(2, "tiny-cross-encoder"),
		bytesField(5, tensor),
		bytesField(11, valueInfo("input_ids", typeInt64, "batch", "sequence")),
		bytesField(11, valueInfo("attention_mask", typeInt64, "batch", "sequence")),
		bytesField(11, valueInfo("token_type_ids", typeInt64, "batch", "sequence")),
		bytesField(12, valueInfo("logits", typeFloat, "batch", int64(1))),
	)
	opset := msg(str(1, ""), varints(2, 13))
	return msg(varints(1, 8), str(2, "knowmind-test"), bytesField(7, graph), bytesField(8, opset))
}

// valueInfo is a ValueInfoProto of a tensor; dims are symbolic (string) or fixed (int64).
func valueInfo(name string, elemType int64, dims ...any) []byte {
	var shape []byte
	for _, d := range dims {
		switch d := d.(type) {
		case string:
			shape = append(shape, bytesField(1, str(2, d))...)
		case int64:
			shape = append(shape, bytesField(1, varints(1, d))...)
		}
	}
	tensorType := msg(varints(1, elemType), bytesField(2, shape))
	return msg(str(1, name), bytesField(2, bytesField(1, tensorType)))
}

func msg(fields ...[]byte) []byte {
	var b []byte
	for _, f := range fields {
		b = append(b, f...)
	}
	return b
}

func varints(num protowire.Number, vs ...int64) []byte {
	var b []byte
	for _, v := range vs {
		b = protowire.AppendTag(b, num, protowire.VarintType)
		b = protowire.AppendVarint(b, uint64(v))
	}
	return b
}

func str(num protowire.Number, s string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, num, protowire.BytesType), s)
}

func bytesField(num protowire.Number, v []byte) []byte {
	return protowire.AppendBytes(protowire.AppendTag(nil, num, protowire.BytesType), v)
}
