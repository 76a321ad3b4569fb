package graph

// Decoding recall's answers: the candidates and hop edges of recallQuery, the details of the
// hits chosen (recallDetailsQuery), and the hits the tools return.

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/dgraph-io/dgo/v240"
	// goccy/go-json decodes the recall's answers (hundreds of candidates and hop edges) in a
	// third of encoding/json's time, with the same API (docs/recall.md).
	json "github.com/goccy/go-json"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/rank"
	"github.com/knowmind/knowmind/search"
)

// recallResponse is the JSON of recallQuery.
type recallResponse struct {
	Vec []struct {
		UID   string  `json:"uid"`
		Score float64 `json:"s"`
		M     []dgMem `json:"m"`
	} `json:"vec"`
	Txt []struct {
		UID string  `json:"uid"`
		DE  string  `json:"de"`
		EN  string  `json:"en"`
		M   []dgMem `json:"m"`
	} `json:"txt"`
	Mem []struct {
		UID       string     `json:"uid"`
		ID        string     `json:"Memory.id"`
		Kind      string     `json:"Memory.kind"`
		Title     string     `json:"Memory.title"`
		Source    string     `json:"Memory.source"`
		ValidFrom *time.Time `json:"Memory.valid_from"`
		ValidTo   *time.Time `json:"Memory.valid_to"`
	} `json:"mem"`
	Content []struct {
		UID     string `json:"uid"`
		Preview string `json:"Memory.preview"`
	} `json:"content"`
	Docs []struct {
		UID  string        `json:"uid"`
		Head []dgChunkText `json:"head"`
	} `json:"docs"`
	Chunks []dgChunkText `json:"chunks"`
	// Notes: what the caller's visibility depends on, for the hits that are notes.
	Notes []dgNote `json:"notes"`
	// Attrs: what a recallFilter's memory rule reads, when it has one.
	Attrs []struct {
		UID      string     `json:"uid"`
		Category string     `json:"Memory.category"`
		Entities []dgEntity `json:"Memory.entities"`
	} `json:"attrs"`
}

// note returns the metadata of the note with uid, or nil.
func (out *recallResponse) note(uid string) *dgNote {
	for i := range out.Notes {
		if out.Notes[i].UID == uid {
			return &out.Notes[i]
		}
	}
	return nil
}

// dgMem is a candidate chunk's memory with what the time signal needs.
type dgMem struct {
	UID       string      `json:"uid"`
	ValidFrom *time.Time  `json:"f"`
	Dates     []time.Time `json:"d"`
}

// validAt keeps, of the candidates' memories, those valid from asof on (valid_from <= asof;
// the request checked the rest of memoryAtTimeFilter).
func (out *recallResponse) validAt(asof time.Time) {
	keep := func(ms []dgMem) []dgMem {
		kept := ms[:0]
		for _, m := range ms {
			if m.ValidFrom != nil && !m.ValidFrom.After(asof) {
				kept = append(kept, m)
			}
		}
		return kept
	}
	for i := range out.Vec {
		out.Vec[i].M = keep(out.Vec[i].M)
	}
	for i := range out.Txt {
		out.Txt[i].M = keep(out.Txt[i].M)
	}
}

// candidateMemories lists the memories of the text and vector candidates (a memory once per
// candidate chunk that reached it).
func (out *recallResponse) candidateMemories() []dgMem {
	var mems []dgMem
	for _, c := range out.Txt {
		mems = append(mems, c.M...)
	}
	for _, c := range out.Vec {
		mems = append(mems, c.M...)
	}
	return mems
}

type dgUID struct {
	UID string `json:"uid"`
}

type dgChunkText struct {
	UID string `json:"uid"`
	DE  string `json:"de"`
	EN  string `json:"en"`
}

func (c dgChunkText) text() string {
	if c.DE != "" {
		return c.DE
	}
	return c.EN
}

// candidates hands the decoded candidates to package search: each chunk with its eligible
// memory (the first, as every chunk belongs to one memory).
func (out *recallResponse) candidates() *search.Candidates {
	var c search.Candidates
	c.Vector = make([]search.Candidate, 0, len(out.Vec))
	for _, v := range out.Vec {
		sc := search.Candidate{Chunk: v.UID, Score: v.Score}
		sc.Ref, _ = parseUID(v.UID)
		if len(v.M) > 0 {
			sc.Memory = v.M[0].UID
		}
		c.Vector = append(c.Vector, sc)
	}
	c.Text = make([]search.Candidate, 0, len(out.Txt))
	for _, t := range out.Txt {
		sc := search.Candidate{Chunk: t.UID, DE: t.DE, EN: t.EN}
		sc.Ref, _ = parseUID(t.UID)
		if len(t.M) > 0 {
			sc.Memory = t.M[0].UID
		}
		c.Text = append(c.Text, sc)
	}
	return &c
}

// scoreVectors fills in the scores of the vector candidates the service scored (vecScore, by
// chunk uid; nil when Dgraph scored them), and drops those it did not (none: the query asks
// for exactly those).
func (out *recallResponse) scoreVectors(vecScore map[uint64]float64) {
	if vecScore == nil {
		return
	}
	kept := out.Vec[:0]
	for _, c := range out.Vec {
		u, err := parseUID(c.UID)
		if s, ok := vecScore[u]; err == nil && ok {
			c.Score = s
			kept = append(kept, c)
		}
	}
	out.Vec = kept
}

// parseHops reads the hop blocks of a decoded response (hopNeI: each node's edges of one
// relation under "e") into an adjacency list; only the eligible neighbours (the ok block) count.
func parseHops(blocks map[string]json.RawMessage, hops, relations int, asOf *time.Time) (map[string][]string, error) {
	adjacent := map[string][]string{}
	if hops == 0 || relations == 0 {
		return adjacent, nil
	}
	var ok []dgMem
	if data, found := blocks["ok"]; found {
		if err := json.Unmarshal(data, &ok); err != nil {
			return nil, fmt.Errorf("decode recall hops: %w", err)
		}
	}
	eligible := make(map[string]bool, len(ok))
	for _, u := range ok {
		// At a time, valid from then on (the request left valid_from to the service).
		if asOf == nil || (u.ValidFrom != nil && !u.ValidFrom.After(*asOf)) {
			eligible[u.UID] = true
		}
	}
	// One block per hop and relation (hopNeI), every node with its edges under "e": typed
	// decoding (a node's keys decoded one by one as raw messages cost more than the whole
	// request's other decoding).
	var nodes []struct {
		UID   string  `json:"uid"`
		Edges []dgUID `json:"e"`
	}
	for n := 1; n <= hops; n++ {
		for i := range relations {
			data, found := blocks["hop"+strconv.Itoa(n)+"e"+strconv.Itoa(i)]
			if !found {
				continue
			}
			nodes = nodes[:0]
			if err := json.Unmarshal(data, &nodes); err != nil {
				return nil, fmt.Errorf("decode recall hop %d: %w", n, err)
			}
			for _, node := range nodes {
				from := node.UID
				for _, p := range node.Edges {
					if eligible[p.UID] && p.UID != from && !slices.Contains(adjacent[from], p.UID) {
						adjacent[from] = append(adjacent[from], p.UID)
					}
				}
			}
		}
	}
	return adjacent, nil
}

// detailReads is what the details request reads beyond what every recall returns: the hits'
// category and entities (a recallFilter's memory rule), the notes' newest revision (as of a
// time, bodySince).
type detailReads struct{ attrs, noteSince bool }

// readDetails reads the details of the chosen hits (recallDetailsQuery) in the recall's
// transaction, into out.Mem, out.Content, out.Docs and out.Chunks.
func readDetails(ctx context.Context, txn *dgo.Txn, out *recallResponse, chosen []rank.Hit, tr *RecallTrace, reads detailReads) error {
	if len(chosen) == 0 {
		return nil
	}
	read := make(map[string]bool, len(out.Txt))
	for _, c := range out.Txt {
		if c.DE != "" || c.EN != "" {
			read[c.UID] = true // Dgraph's text step read it (the service's own search reads none)
		}
	}
	uids := make([]uint64, 0, len(chosen))
	var chunks []uint64
	for _, h := range chosen {
		if u, err := parseUID(h.ID); err == nil {
			uids = append(uids, u)
		}
		if u, err := parseUID(h.Chunk); err == nil && h.Chunk != "" && !read[h.Chunk] {
			chunks = append(chunks, u)
		}
	}
	chunkBlock := ""
	if len(chunks) > 0 {
		chunkBlock = fmt.Sprintf(recallChunksBlock, formatUIDs(chunks))
	}
	if reads.attrs {
		chunkBlock += fmt.Sprintf(recallAttrsBlock, formatUIDs(uids))
	}
	sinceBlock, sinceField := "", ""
	if reads.noteSince {
		sinceBlock, sinceField = fmt.Sprintf(recallNoteSinceBlock, formatUIDs(uids)), recallNoteSinceField
	}
	dql := fmt.Sprintf(recallDetailsQuery, formatUIDs(uids), chunkBlock, sinceBlock, sinceField)
	tr.Requests = append(tr.Requests, RecallRequest{DQL: dql})
	resp, err := txn.Query(ctx, dql)
	if err != nil {
		return fmt.Errorf("recall details query: %w", err)
	}
	var content recallResponse
	if err := json.Unmarshal(resp.Json, &content); err != nil {
		return fmt.Errorf("decode recall details: %w", err)
	}
	// A recall may read details more than once (hits the caller may not see make room for the
	// next ones): each read adds to what the earlier ones found.
	out.Mem, out.Docs = append(out.Mem, content.Mem...), append(out.Docs, content.Docs...)
	out.Chunks, out.Content = append(out.Chunks, content.Chunks...), append(out.Content, content.Content...)
	out.Notes, out.Attrs = append(out.Notes, content.Notes...), append(out.Attrs, content.Attrs...)
	return nil
}

// hitFilter tells whether a recall may return a hit; note is the hit's note metadata (nil for
// memories and documents, and for a note whose metadata was not read).
type hitFilter func(h knowmind.RecallHit, note *dgNote) bool

// recallFilter is what a recall may return beyond its memory filter; both rules apply before k.
type recallFilter struct {
	keep hitFilter // nil: every hit
	// memory, when set, tells whether a memory of a category naming these entities may be
	// returned; the details read both for the hits chosen.
	memory func(category string, entities []knowmind.EntityRef) bool
}

// hits turns the first k fused memories that keep accepts (nil: all) into the tool's result;
// from[i] is the fused entry of hit i.
func (out *recallResponse) hits(fused []rank.Hit, k int, atTime bool, f recallFilter) (hits []knowmind.RecallHit, from []rank.Hit) {
	type memInfo struct {
		id, kind, title, source string
		validFrom, validTo      *time.Time
	}
	mems := make(map[string]memInfo, len(out.Mem))
	for _, m := range out.Mem {
		mems[m.UID] = memInfo{m.ID, m.Kind, m.Title, m.Source, m.ValidFrom, m.ValidTo}
	}
	content := make(map[string]string, len(out.Content))
	for _, c := range out.Content {
		content[c.UID] = c.Preview
	}
	chunkText := map[string]string{}
	for _, c := range out.Txt {
		chunkText[c.UID] = dgChunkText{DE: c.DE, EN: c.EN}.text()
	}
	for _, c := range out.Chunks {
		chunkText[c.UID] = c.text()
	}
	docHead := map[string]string{}
	for _, d := range out.Docs {
		if len(d.Head) > 0 {
			docHead[d.UID] = d.Head[0].text()
		}
	}

	res := make([]knowmind.RecallHit, 0, k)
	from = make([]rank.Hit, 0, k)
	for _, h := range fused {
		if len(res) == k {
			break
		}
		m, ok := mems[h.ID]
		if !ok || m.id == "" {
			continue // not an eligible memory (defensive: every hit passed the memory filter)
		}
		hit := knowmind.RecallHit{MemoryID: m.id, Kind: m.kind, Title: m.title, Source: m.source,
			Score: search.RoundScore(h.Score)}
		if m.kind == knowmind.KindDocument {
			hit.Content = chunkText[h.Chunk]
			if hit.Content == "" {
				hit.Content = docHead[h.ID]
			}
		} else {
			hit.Content = content[h.ID]
		}
		hit.Content = runes.Truncate(hit.Content, knowmind.RecallMaxContentChars)
		if atTime {
			hit.ValidFrom, hit.ValidTo = m.validFrom, m.validTo
		}
		if f.keep != nil && !f.keep(hit, out.note(h.ID)) {
			continue
		}
		if f.memory != nil && !out.memoryKept(h.ID, f.memory) {
			continue
		}
		res = append(res, hit)
		from = append(from, h)
	}
	return res, from
}

// memoryKept applies a recallFilter's memory rule to the memory with uid.
func (out *recallResponse) memoryKept(uid string, rule func(string, []knowmind.EntityRef) bool) bool {
	for _, a := range out.Attrs {
		if a.UID == uid {
			refs := make([]knowmind.EntityRef, len(a.Entities))
			for i, e := range a.Entities {
				refs[i] = e.ref()
			}
			return rule(a.Category, refs)
		}
	}
	return rule("", nil)
}
