// Package onnxtest writes tiny, real ONNX models for tests: hugot loads and runs them like any
// downloaded sentence transformer or cross-encoder. They are generated at test time so that no
// binary model is committed and no download is needed (Hugging Face is unreachable where the
// tests run). The ModelProto is encoded by hand with protowire; field numbers are onnx.proto's.
package onnxtest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"

	"google.golang.org/protobuf/encoding/protowire"
)

// ONNX TensorProto data types and AttributeProto types used here.
const (
	typeFloat = 1
	typeInt64 = 7
	attrInt   = 2
	attrInts  = 7
)

// Embedder is a sentence-transformer stand-in: one Gather looks up each input_id's row in a
// seeded random [vocab × dim] table and returns it as last_hidden_state [batch, seq, dim];
// hugot then mean-pools and normalises, so texts sharing tokens get similar vectors.
func Embedder(vocab, dim int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	table := make([]byte, 0, vocab*dim*4)
	for range vocab * dim {
		table = binary.LittleEndian.AppendUint32(table, math.Float32bits(float32(rng.NormFloat64())))
	}
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
	// hugot feeds every declared input it knows by name; declaring the usual BERT trio checks
	// that it builds all three.
	return model(msg(
		bytesField(1, node),
		str(2, "tiny"),
		bytesField(5, tensor),
		bertInputs(),
		bytesField(12, valueInfo("last_hidden_state", typeFloat, "batch", "sequence", int64(dim))),
	))
}

// CrossEncoder is a cross-encoder stand-in: a Gather looks up one weight per token
// ([vocab × 1]), ReduceMean averages them over the sequence, giving one logit per (query,
// passage) pair, shape [batch, 1]. Every weight is 0 except token hot's, so a passage holding
// that token is the relevant one.
func CrossEncoder(vocab, hot int) []byte {
	table := make([]byte, 0, vocab*4)
	for i := range vocab {
		w := float32(0)
		if i == hot {
			w = 40 // averaged over a padded sequence of up to ~32 tokens: still a clear logit
		}
		table = binary.LittleEndian.AppendUint32(table, math.Float32bits(w))
	}
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
	return model(msg(
		bytesField(1, gather),
		bytesField(1, reduce),
		str(2, "tiny-cross-encoder"),
		bytesField(5, tensor),
		bertInputs(),
		bytesField(12, valueInfo("logits", typeFloat, "batch", int64(1))),
	))
}

// model wraps a GraphProto into a ModelProto (IR version 8, default opset 13).
func model(graph []byte) []byte {
	opset := msg(str(1, ""), varints(2, 13))
	return msg(varints(1, 8), str(2, "knowmind-test"), bytesField(7, graph), bytesField(8, opset))
}

// bertInputs declares input_ids, attention_mask and token_type_ids [batch, sequence].
func bertInputs() []byte {
	return msg(
		bytesField(11, valueInfo("input_ids", typeInt64, "batch", "sequence")),
		bytesField(11, valueInfo("attention_mask", typeInt64, "batch", "sequence")),
		bytesField(11, valueInfo("token_type_ids", typeInt64, "batch", "sequence")),
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
