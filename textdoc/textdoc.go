// Package textdoc turns a memory's chunks, as the store answers them, into BM25 documents
// (bm25.Source, Doc): the analysis behind graph's in-process text index (graph/textindex.go),
// and the cache of analysed chunk texts recall scores (TokenCache). It holds no Dgraph code:
// graph reads the rows and keeps the index; this package only shapes and analyses them.
package textdoc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/knowmind/knowmind/bm25"
)

// Doc is a chunk ready for bm25.Index.Add, with its vector when held (Vec nil: none; the
// vector's uid is UID).
type Doc struct {
	ID, Lang string
	UID      uint64 // the chunk's uid (0: not known), what recall's text search returns
	Tokens   []string
	Length   int      // the text's length for BM25 (bm25.Analysis.AnalyzeDoc)
	Title    []string // the memory's title, analysed (the title field; nil: none)
	Vec      []float32
	// Place is the memory's place in a sequence (zero: none), the same for all its chunks.
	Place Place
}

// Passages embeds chunk texts (graph.Embedder's EmbedPassages).
type Passages interface {
	EmbedPassages(ctx context.Context, texts []string) ([][]float32, error)
}

// DocID is a chunk's BM25 document id: "<Memory.id>#<Chunk.position>", so that the ingest code
// can report a memory without knowing the store's chunk uids.
func DocID(memoryID string, position int) string {
	return memoryID + "#" + strconv.Itoa(position)
}

// StoredLang is the language tag a memory's chunk text is stored under: "de" for German,
// "" (untagged, English analysis) for everything else — the rule ingest writes by.
func StoredLang(lang string) string {
	if lang == "de" {
		return "de"
	}
	return ""
}

// Memory is a memory with its chunk texts (and uids and vectors when asked for), as the store
// answers a scan or a sync's fetch (graph's scanTextQuery and syncFetchQuery).
type Memory struct {
	UID   string `json:"uid"`
	ID    string `json:"Memory.id"`
	SHA   string `json:"Memory.content_sha"` // read by a load (scanTextQuery), not by a sync's fetch
	Title string `json:"Memory.title"`
	// Sequence and Position: the memory's place in a sequence ("": none).
	Sequence string `json:"Memory.sequence"`
	Position int    `json:"Memory.position"`
	Chunks   []struct {
		P   int             `json:"p"`
		DE  string          `json:"de"`
		EN  string          `json:"en"`
		UID string          `json:"uid"`
		V   json.RawMessage `json:"v"` // parsed by the analysing worker, not the reader
		E   int             `json:"e"` // 1: a vector is stored (read instead of V when recomputing)
	} `json:"Memory.chunks"`
}

// Analyse turns the memory's chunks into BM25 documents with their vectors: read, or computed
// with recompute when set. A vector that cannot be parsed or computed is logged and left out:
// the chunk stays findable through HNSW.
func (m Memory) Analyse(ctx context.Context, log *slog.Logger, recompute Passages, analyze func(lang, text string) ([]string, int)) []Doc {
	docs := make([]Doc, 0, len(m.Chunks))
	sources := m.Sources()
	var computed [][]float32
	if recompute != nil {
		computed = m.recompute(ctx, log, recompute, sources)
	}
	titles := map[string][]string{} // per language: a memory's chunks share their title's analysis
	for i, s := range sources {
		d := Doc{ID: s.ID, Lang: s.Lang}
		if m.Sequence != "" {
			d.Place = Place{Sequence: m.Sequence, Position: m.Position}
		}
		d.Tokens, d.Length = analyze(s.Lang, s.Text)
		if m.Title != "" {
			tt, ok := titles[s.Lang]
			if !ok {
				tt, _ = analyze(s.Lang, m.Title)
				titles[s.Lang] = tt
			}
			d.Title = tt
		}
		if u, err := parseUID(m.Chunks[i].UID); err == nil {
			d.UID = u
		}
		if computed != nil {
			if computed[i] != nil && d.UID != 0 {
				d.Vec = computed[i]
			}
		} else if c := m.Chunks[i]; len(c.V) > 0 && c.UID != "" {
			_, err := parseUID(c.UID) // the vector's uid is d.UID: the same string parsed
			var vec []float32
			if err == nil {
				vec, err = ParseVector(c.V)
			}
			if err != nil {
				log.Warn("chunk vector not held for exact search", "memory", m.ID, "chunk", c.UID, "err", err)
			} else if vec != nil {
				d.Vec = vec
			}
		}
		docs = append(docs, d)
	}
	return docs
}

// recompute embeds the texts of the memory's chunks that have a uid and a stored vector, in
// sources' order (nil where none, and everywhere when the embedder fails).
func (m Memory) recompute(ctx context.Context, log *slog.Logger, emb Passages, sources []bm25.Source) [][]float32 {
	var texts []string
	var at []int
	for i, c := range m.Chunks {
		if c.UID != "" && c.E > 0 {
			texts = append(texts, sources[i].Text)
			at = append(at, i)
		}
	}
	out := make([][]float32, len(sources))
	if len(texts) == 0 {
		return out
	}
	vecs, err := emb.EmbedPassages(ctx, texts)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("embedder returned %d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		log.Warn("chunk vectors not held for exact search", "memory", m.ID, "err", err)
		return out
	}
	for j, i := range at {
		out[i] = vecs[j]
	}
	return out
}

// Sources are the memory's chunks as BM25 documents: German text from Chunk.text@de, English
// from the untagged Chunk.text.
func (m Memory) Sources() []bm25.Source {
	out := make([]bm25.Source, 0, len(m.Chunks))
	for _, c := range m.Chunks {
		lang, text := "", c.EN
		if c.DE != "" {
			lang, text = "de", c.DE
		}
		out = append(out, bm25.Source{ID: DocID(m.ID, c.P), Lang: lang, Text: text})
	}
	return out
}

// ParseVector reads a float32vector as Dgraph's JSON answer carries it: an array of numbers,
// or the same as a string ("[0.1, 0.2]"). nil for an absent value.
func ParseVector(raw []byte) ([]float32, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		s, err := strconv.Unquote(string(raw))
		if err != nil {
			return nil, fmt.Errorf("vector: %w", err)
		}
		raw = bytes.TrimSpace([]byte(s))
	}
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, fmt.Errorf("vector: not an array")
	}
	body := raw[1 : len(raw)-1]
	out := make([]float32, 0, bytes.Count(body, []byte{','})+1)
	for len(body) > 0 {
		end := bytes.IndexByte(body, ',')
		field := body
		if end >= 0 {
			field, body = body[:end], body[end+1:]
		} else {
			body = nil
		}
		f, err := strconv.ParseFloat(string(bytes.TrimSpace(field)), 32)
		if err != nil {
			return nil, fmt.Errorf("vector: %w", err)
		}
		out = append(out, float32(f))
	}
	return out, nil
}

// parseUID reads a uid as Dgraph writes it ("0x2a").
func parseUID(s string) (uint64, error) {
	return strconv.ParseUint(s, 0, 64)
}
