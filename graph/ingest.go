package graph

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"github.com/google/uuid"
	"golang.org/x/text/unicode/norm"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/chunk"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/textdoc"
)

// What store_memory, upload_document and update_fact share: validation,
// the content hash, chunking, embedding, the JSON of a new Memory node with
// its chunks, and the record of a failed ingest.

// embedBatch is how many chunk texts go to the embedder per call; the
// embedder batches further inside. Between calls a large document logs its
// progress.
const embedBatch = 128

// failedWriteTimeout bounds recording a failed ingest, which runs even when
// the request's context has ended (the caller may have gone away).
const failedWriteTimeout = 15 * time.Second

// entry is a memory or document on its way into the graph.
type entry struct {
	id           string // Memory.id, a UUID
	kind         string // knowmind.KindMemory or KindDocument
	title        string
	content      string // as stored: the input without surrounding blanks
	memoryType   string
	category     string // Memory.category (memory engine); update_fact carries it over
	tags         []string
	source       string
	updateReason string
	// at is the time the entry is about (occurred_at; zero: the time of writing): its
	// valid_from, and what the times its text names are resolved against (Memory.dates).
	at time.Time
	// sequence, position: the entry's place in a sequence (sequence.go); positioned tells a
	// given or assigned position from none yet.
	sequence   string
	position   int
	positioned bool
	sha        string // hex sha-256 of the normalised content
	lang       string // chunk.German or chunk.English
	chunks     []chunk.Chunk
	texts      []string // per chunk: what is stored in Chunk.text and embedded
	vectors    [][]float32
	chunkUIDs  []uint64 // per chunk, once committed (0: not known)
	entityUIDs []string // Memory.entities (memory engine)
	entityRefs []knowmind.EntityRef
	// checkConflicts: afterWrite compares the entry with the current facts
	// about candidates (the entities a store named) and the nearest by meaning.
	checkConflicts bool
	candidates     []knowmind.CandidateEntity
}

// committed records the chunk uids Dgraph assigned to the blank nodes of e.node(blank, ...),
// for the exact vector search (vecindex.go).
func (e *entry) committed(blank string, uids map[string]string) {
	e.chunkUIDs = make([]uint64, len(e.chunks))
	for i := range e.chunks {
		e.chunkUIDs[i], _ = parseUID(uids[fmt.Sprintf("%s_c%d", blank, i)])
	}
}

// checkContent applies the spec's content rules (-32603 content_required /
// too_large), before anything else is done.
func checkContent(content string) (string, error) {
	// A byte length under the limit cannot hold more runes than that; only
	// longer strings are counted.
	if len(content) > knowmind.MaxContentChars && utf8.RuneCountInString(content) > knowmind.MaxContentChars {
		return "", knowmind.Internal(knowmind.ReasonTooLarge, "content exceeds %d characters", knowmind.MaxContentChars)
	}
	content = strings.TrimSpace(content)
	if content == "" {
		return "", knowmind.Internal(knowmind.ReasonContentRequired, "content is required and must not be empty")
	}
	// gRPC refuses to send a string that is not UTF-8 (an internal error, found by FuzzWritePath).
	if !utf8.ValidString(content) {
		return "", knowmind.InvalidParam("content", "content is not valid UTF-8")
	}
	return content, nil
}

// checkText trims s and bounds it; required text must not be blank.
func checkText(param, s string, max int, required bool) (string, error) {
	s = strings.TrimSpace(s)
	if required && s == "" {
		return "", knowmind.InvalidParam(param, "%s is required", param)
	}
	if utf8.RuneCountInString(s) > max {
		return "", knowmind.InvalidParam(param, "%s exceeds %d characters", param, max)
	}
	if !utf8.ValidString(s) {
		return "", knowmind.InvalidParam(param, "%s is not valid UTF-8", param)
	}
	return s, nil
}

func checkMemoryType(s string) (string, error) {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "":
		return knowmind.MemorySemantic, nil
	case knowmind.MemorySemantic, knowmind.MemoryEpisodic, knowmind.MemoryProcedural, knowmind.MemoryReference:
		return s, nil
	}
	return "", knowmind.InvalidParam("memory_type", "memory_type must be one of semantic, episodic, procedural, reference")
}

// checkTags trims tags, drops duplicates and bounds count and length.
func checkTags(tags []string) ([]string, error) {
	if len(tags) > knowmind.MaxTags {
		return nil, knowmind.InvalidParam("tags", "at most %d tags", knowmind.MaxTags)
	}
	out := make([]string, 0, len(tags))
	seen := make(map[string]bool, len(tags))
	for _, tag := range tags {
		tag = strings.TrimSpace(tag)
		if tag == "" {
			return nil, knowmind.InvalidParam("tags", "tags must not be empty")
		}
		if utf8.RuneCountInString(tag) > knowmind.MaxTagChars {
			return nil, knowmind.InvalidParam("tags", "a tag exceeds %d characters", knowmind.MaxTagChars)
		}
		if !seen[tag] {
			seen[tag] = true
			out = append(out, tag)
		}
	}
	return out, nil
}

// ContentSHA is the hex sha-256 of content after normalisation: Unicode NFC
// (so "ü" typed as one or two code points is the same), whitespace runs
// collapsed to one space, ends trimmed. Reformatting a text does not make it
// new content.
func ContentSHA(content string) string {
	normal := strings.Join(strings.Fields(norm.NFC.String(content)), " ")
	sum := sha256.Sum256([]byte(normal))
	return hex.EncodeToString(sum[:])
}

func newEntry(kind, title, content string) *entry {
	return &entry{
		id:      uuid.NewString(),
		kind:    kind,
		title:   title,
		content: content,
		sha:     ContentSHA(content),
	}
}

// maxChunkHeaderChars bounds the first line of a chunk's text (title and heading path).
const maxChunkHeaderChars = 400

// split chunks the content and builds each chunk's text: the title and
// heading path as a first line, so a chunk found alone still says what it
// belongs to (and both are searchable), then the body. Content that would
// make more than knowmind.MaxChunks chunks, or store more than
// knowmind.MaxChunkExpansion times its characters in them, is too_large:
// checked here, before anything is embedded or written.
func (e *entry) split() error {
	e.lang = chunk.DetectLanguage(e.content)
	e.chunks = chunk.Split(e.content, chunk.Options{})
	if len(e.chunks) > knowmind.MaxChunks {
		n := len(e.chunks)
		e.chunks = nil
		return knowmind.Internal(knowmind.ReasonTooLarge,
			"content makes %d sections, more than %d: use fewer headings or split it into several documents", n, knowmind.MaxChunks)
	}
	e.texts = make([]string, len(e.chunks))
	stored := 0
	for i, c := range e.chunks {
		header := e.title
		if c.Heading != "" {
			if header != "" {
				header += " > "
			}
			header += c.Heading
		}
		header = runes.Truncate(header, maxChunkHeaderChars)
		if header == "" {
			e.texts[i] = c.Text
		} else {
			e.texts[i] = header + "\n\n" + c.Text
		}
		stored += utf8.RuneCountInString(e.texts[i]) + utf8.RuneCountInString(c.Heading)
	}
	budget := knowmind.MaxChunkExpansion*utf8.RuneCountInString(e.content) + maxChunkHeaderChars + chunk.MaxHeadingPathChars
	if stored > budget {
		n := len(e.chunks)
		e.chunks, e.texts = nil, nil
		return knowmind.Internal(knowmind.ReasonTooLarge,
			"content makes %d sections whose headings and title, repeated in each, would store %d characters for %d: "+
				"shorten the title or headings, or merge short sections", n, stored, utf8.RuneCountInString(e.content))
	}
	return nil
}

// embed fills e.vectors, one per chunk, checking what the embedder returns:
// a wrong count, dimension or a non-finite vector would corrupt the index.
func (t *Tenant) embed(ctx context.Context, e *entry) error {
	emb := t.c.cfg.Embedder
	if emb == nil {
		return fmt.Errorf("no embedder configured")
	}
	e.vectors = make([][]float32, 0, len(e.texts))
	for start := 0; start < len(e.texts); start += embedBatch {
		end := min(start+embedBatch, len(e.texts))
		vecs, err := emb.EmbedPassages(ctx, e.texts[start:end])
		if err != nil {
			return fmt.Errorf("embed chunks %d-%d with %s: %w", start, end-1, emb.ID(), err)
		}
		if len(vecs) != end-start {
			return fmt.Errorf("embedder %s returned %d vectors for %d texts", emb.ID(), len(vecs), end-start)
		}
		for i, v := range vecs {
			if len(v) != emb.Dim() {
				return fmt.Errorf("embedder %s returned a vector of %d dimensions, want %d", emb.ID(), len(v), emb.Dim())
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					return fmt.Errorf("embedder %s returned a non-finite vector for chunk %d", emb.ID(), start+i)
				}
			}
		}
		e.vectors = append(e.vectors, vecs...)
		if len(e.texts) > embedBatch {
			t.c.log.Info("embedding chunks", "tenant", t.Name, "id", e.id, "title", e.title,
				"done", end, "total", len(e.texts))
		}
	}
	return nil
}

// node is the JSON of the new Memory node. With status indexed it carries
// its chunks and their vectors; with status failed only the record and the
// error, so nothing of it is searchable.
func (e *entry) node(blank, now, status, failure string) map[string]any {
	m := map[string]any{
		"uid":                "_:" + blank,
		"dgraph.type":        "Memory",
		"Memory.id":          e.id,
		"Memory.kind":        e.kind,
		"Memory.content":     e.content,
		"Memory.preview":     previewOf(e.content),
		"Memory.status":      status,
		"Memory.content_sha": e.sha,
		"Memory.created_at":  now,
		"Memory.updated_at":  now,
		"Memory.valid_from":  now,
		"Memory.chunk_count": 0,
	}
	at, _ := time.Parse(time.RFC3339Nano, now)
	if !e.at.IsZero() {
		at = e.at
		m["Memory.valid_from"] = formatTime(e.at)
	}
	if dates := memoryDates(e.content, at); len(dates) > 0 {
		m["Memory.dates"] = dates
	}
	setIf := func(pred, v string) {
		if v != "" {
			m[pred] = v
		}
	}
	setIf("Memory.title", e.title)
	setIf("Memory.lang", e.lang)
	setIf("Memory.memory_type", e.memoryType)
	setIf("Memory.category", e.category)
	setIf("Memory.source", e.source)
	if e.sequence != "" && e.positioned {
		m["Memory.sequence"] = e.sequence
		m["Memory.position"] = e.position
	}
	setIf("Memory.update_reason", e.updateReason)
	setIf("Memory.error", failure)
	if len(e.tags) > 0 {
		m["Memory.tags"] = e.tags
	}
	if len(e.entityUIDs) > 0 {
		m["Memory.entities"] = uidRefs(e.entityUIDs)
	}
	if status != knowmind.StatusIndexed {
		return m
	}
	chunks := e.chunkNodes(blank)
	m["Memory.chunks"] = chunks
	m["Memory.chunk_count"] = len(chunks)
	return m
}

// chunkNodes is the JSON of e's chunks, blank nodes "<blank>_c<i>" (see committed). A chunk
// without a vector (a note written while the embedder failed) is found by full text only.
func (e *entry) chunkNodes(blank string) []map[string]any {
	// German text carries the language tag so Dgraph's German analyser
	// indexes it; English stays untagged (see schema/tenant.dql).
	textPred := "Chunk.text"
	if e.lang == chunk.German {
		textPred = "Chunk.text@de"
	}
	chunks := make([]map[string]any, len(e.chunks))
	for i, c := range e.chunks {
		ch := map[string]any{
			"uid":            fmt.Sprintf("_:%s_c%d", blank, i),
			"dgraph.type":    "Chunk",
			textPred:         e.texts[i],
			"Chunk.position": c.Position,
		}
		if i < len(e.vectors) {
			ch["Chunk.embedding"] = VectorString(e.vectors[i])
		}
		if c.Heading != "" {
			ch["Chunk.heading"] = c.Heading
		}
		chunks[i] = ch
	}
	return chunks
}

// recordFailedUpsert writes the failed record only if no node holds the
// entry's id yet, and reads back what does.
const recordFailedUpsert = `query q($id: string) {
  m as var(func: eq(Memory.id, $id))
  stored(func: uid(m)) { Memory.status  Memory.chunks { uid  p: Chunk.position } }
}`

// recordFailed keeps a memory whose embedding or write failed, marked
// failed with the internal error text, and returns the client's error
// (ingest_failed, naming the kept id). If even this write fails, the error
// is logged and ingest_failed returned all the same: nothing is reported
// indexed.
//
// A write whose commit was sent before it failed (the request's context
// ended, the alpha went away) may have committed all the same. The failed
// record is therefore an upsert on Memory.id (@upsert: it conflicts with a
// commit still in flight): if the entry is stored indexed, that is the
// result, and no second node with the same id is written.
func (t *Tenant) recordFailed(ctx context.Context, e *entry, cause error) (knowmind.StoreResult, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), failedWriteTimeout)
	defer cancel()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	var stored struct {
		Stored []struct {
			Status string `json:"Memory.status"`
			Chunks []struct {
				UID string `json:"uid"`
				P   int    `json:"p"`
			} `json:"Memory.chunks"`
		}
	}
	body, err := json.Marshal(e.node("m", now, knowmind.StatusFailed, cause.Error()))
	if err == nil {
		err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
			stored.Stored = nil
			resp, err := txn.Do(ctx, &api.Request{
				Query:     recordFailedUpsert,
				Vars:      map[string]string{"$id": e.id},
				Mutations: []*api.Mutation{{Cond: `@if(eq(len(m), 0))`, SetJson: body}},
			})
			if err != nil {
				return err
			}
			return json.Unmarshal(resp.Json, &stored)
		})
	}
	if err == nil && len(stored.Stored) > 0 && stored.Stored[0].Status == knowmind.StatusIndexed {
		t.c.log.Warn("ingest reported a failure after its commit was sent; it is stored", "tenant", t.Name,
			"kind", e.kind, "id", e.id, "err", cause)
		byPosition := map[int]string{}
		for _, c := range stored.Stored[0].Chunks {
			byPosition[c.P] = c.UID
		}
		e.chunkUIDs = make([]uint64, len(e.chunks))
		for i, c := range e.chunks {
			e.chunkUIDs[i], _ = parseUID(byPosition[c.Position])
		}
		aw := t.afterWrite(ctx, e)
		return knowmind.StoreResult{MemoryID: e.id, ID: e.id, Title: e.title, Status: knowmind.StatusIndexed,
			ChunksWritten: len(e.chunks), EmbeddingProvider: t.provider(), PMMatches: aw.pmMatches()}, nil
	}
	t.c.log.Error("ingest failed", "tenant", t.Name, "kind", e.kind, "id", e.id, "title", e.title, "err", cause)
	res := knowmind.StoreResult{MemoryID: e.id, ID: e.id, Title: e.title, Status: knowmind.StatusFailed,
		EmbeddingProvider: t.provider()}
	kerr := knowmind.Internal(knowmind.ReasonIngestFailed, "the %s could not be indexed; it is kept with status failed", e.kind)
	kerr.Data = map[string]any{"id": e.id, "status": knowmind.StatusFailed}
	if err != nil {
		t.c.log.Error("recording failed ingest failed too", "tenant", t.Name, "id", e.id, "err", err)
		res = knowmind.StoreResult{Title: e.title, Status: knowmind.StatusFailed, EmbeddingProvider: t.provider()}
		kerr = knowmind.Internal(knowmind.ReasonIngestFailed, "the %s could not be stored", e.kind)
	}
	return res, kerr
}

// indexed tells recall's full-text statistics and exact vector search about an entry just
// committed with status indexed (see textindex.go, vecindex.go).
func (t *Tenant) indexed(e *entry) {
	chunks := make([]textChunk, len(e.chunks))
	for i, c := range e.chunks {
		chunks[i] = textChunk{Position: c.Position, Text: e.texts[i]}
		if i < len(e.chunkUIDs) {
			chunks[i].UID = e.chunkUIDs[i]
		}
		if i < len(e.vectors) {
			chunks[i].Vec = e.vectors[i]
		}
	}
	t.indexText(e.id, e.lang, e.sha, e.title, e.place(), chunks)
}

// place is the entry's place in a sequence for the text index (zero: none).
func (e *entry) place() textdoc.Place {
	if e.sequence == "" || !e.positioned {
		return textdoc.Place{}
	}
	return textdoc.Place{Sequence: e.sequence, Position: e.position}
}

func (t *Tenant) provider() string {
	if t.c.cfg.Embedder == nil {
		return ""
	}
	return t.c.cfg.Embedder.Provider()
}

func nowString() string { return time.Now().UTC().Format(time.RFC3339Nano) }

// dgMemory is a Memory node as DQL returns it.
type dgMemory struct {
	UID          string      `json:"uid"`
	ID           string      `json:"Memory.id"`
	Kind         string      `json:"Memory.kind"`
	Title        string      `json:"Memory.title"`
	Content      string      `json:"Memory.content"`
	MemoryType   string      `json:"Memory.memory_type"`
	Category     string      `json:"Memory.category"`
	Tags         []string    `json:"Memory.tags"`
	Source       string      `json:"Memory.source"`
	Status       string      `json:"Memory.status"`
	ContentSHA   string      `json:"Memory.content_sha"`
	ChunkCount   int         `json:"Memory.chunk_count"`
	Chunks       int         `json:"chunks"` // count(Memory.chunks)
	CreatedAt    time.Time   `json:"Memory.created_at"`
	UpdatedAt    time.Time   `json:"Memory.updated_at"`
	ValidFrom    time.Time   `json:"Memory.valid_from"`
	ValidTo      *time.Time  `json:"Memory.valid_to"`
	UpdateReason string      `json:"Memory.update_reason"`
	Dates        []time.Time `json:"Memory.dates"`
	Sequence     string      `json:"Memory.sequence"`
	Position     *int        `json:"Memory.position"`
	Successors   int         `json:"successors"` // open SUPERSEDED_BY edges (update_fact's target check)
	Entities     []dgUID     `json:"Memory.entities"`
	// Memory engine: set on facts knowmind_capture stored (ReviewedAt: via a review).
	Extractor  string     `json:"Memory.extractor"`
	Confidence float64    `json:"Memory.confidence"`
	ReviewedAt *time.Time `json:"Memory.reviewed_at"`
}

func (m dgMemory) domain() knowmind.Memory {
	return knowmind.Memory{
		ID: m.ID, Kind: m.Kind, Title: m.Title, Content: m.Content, MemoryType: m.MemoryType,
		Tags: m.Tags, Source: m.Source, Status: m.Status, ContentSHA: m.ContentSHA, Chunks: m.Chunks,
		CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, ValidFrom: m.ValidFrom, ValidTo: m.ValidTo,
		UpdateReason: m.UpdateReason, Dates: sortedDates(m.Dates), Sequence: m.Sequence, Position: m.Position,
	}
}

// unchanged is the result for content that is already stored.
func (t *Tenant) unchanged(m dgMemory) knowmind.StoreResult {
	return knowmind.StoreResult{MemoryID: m.ID, ID: m.ID, Title: m.Title, Status: m.Status,
		EmbeddingProvider: t.provider(), Unchanged: true}
}
