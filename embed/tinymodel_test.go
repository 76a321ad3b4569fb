package embed

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// The tiny model is a real ONNX file that hugot loads and runs like any
// sentence transformer: one Gather looks up each input_id's row in a
// [vocab × dim] table and returns it as last_hidden_state [batch, seq, dim].
// hugot then mean-pools and normalises, so texts sharing tokens get similar
// vectors. It is generated at test time so no binary model is committed.

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
	if err := os.WriteFile(filepath.Join(dir, "model.onnx"), tinyONNX(tinyVocab, tinyDim, 42), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// tinyONNX encodes the ModelProto by hand (field numbers from onnx.proto).
func tinyONNX(vocab, dim int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	table := make([]byte, 0, vocab*dim*4)
	for range vocab * dim {
		table = binary.LittleEndian.AppendUint32(table, math.Float32bits(float32(rng.NormFloat64())))
	}

	const (
		typeFloat = 1
		typeInt64 = 7
	)
	tensor := msg(
		varints(1, int64(vocab), int64(dim)), // dims
		varints(2, typeFloat),                // data_type
		str(8, "embeddings"),                 // name
		bytesField(9, table),                 // raw_data
	)
	node := msg(
		str(1, "embeddings"), str(1, "input_ids"), // inputs: data, indices
		str(2, "last_hidden_state"),
		str(3, "lookup"),
		str(4, "Gather"),
	)
	// hugot feeds every declared input it knows by name; declaring the
	// usual BERT trio checks that it builds all three.
	graph := msg(
		bytesField(1, node),
		str(2, "tiny"),
		bytesField(5, tensor),
		bytesField(11, valueInfo("input_ids", typeInt64, "batch", "sequence")),
		bytesField(11, valueInfo("attention_mask", typeInt64, "batch", "sequence")),
		bytesField(11, valueInfo("token_type_ids", typeInt64, "batch", "sequence")),
		bytesField(12, valueInfo("last_hidden_state", typeFloat, "batch", "sequence", int64(dim))),
	)
	opset := msg(str(1, ""), varints(2, 13))
	return msg(
		varints(1, 8), // ir_version
		str(2, "knowmind-test"),
		bytesField(7, graph),
		bytesField(8, opset),
	)
}

// valueInfo is a ValueInfoProto of a tensor; dims are symbolic (string) or fixed (int64).
func valueInfo(name string, elemType int64, dims ...any) []byte {
	var shape []byte
	for _, d := range dims {
		switch d := d.(type) {
		case string:
			shape = append(shape, bytesField(1, str(2, d))...) // Dimension.dim_param
		case int64:
			shape = append(shape, bytesField(1, varints(1, d))...) // Dimension.dim_value
		}
	}
	tensorType := msg(varints(1, elemType), bytesField(2, shape))
	typeProto := bytesField(1, tensorType) // TypeProto.tensor_type
	return msg(str(1, name), bytesField(2, typeProto))
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
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func bytesField(num protowire.Number, v []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}
