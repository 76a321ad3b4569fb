package main

import (
	"context"
	"encoding/json"
	"io"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/search"
)

// dumpHit is one hit of a question in the per-question dump (--dump), with the evidence behind
// it: its fused text and context signals and what the second stage reads of its text.
type dumpHit struct {
	Src     string   `json:"src"`
	ID      string   `json:"id"`
	Score   float64  `json:"score"`
	Via     bool     `json:"via"`
	ViaID   string   `json:"via_id,omitempty"` // the direct hit the graph reached it from
	Hops    int      `json:"hops"`
	Text    float64  `json:"text"`
	Context float64  `json:"ctx"`
	Cov     float64  `json:"cov"`
	Near    float64  `json:"near"`
	Holds   []string `json:"holds"`
}

// dumpSide is one text side of a question: its terms with their document frequency.
type dumpSide struct {
	Lang  string   `json:"lang"`
	Docs  int64    `json:"docs"`
	Terms []string `json:"terms"`
	DF    []int64  `json:"df"`
}

// dumpQuestion is one line of the dump: a question, where its answers are, and the default
// ranking's first RecallMaxK hits without a floor, for simulating rules over the scores.
type dumpQuestion struct {
	Set      string     `json:"set"`
	Conv     string     `json:"conv,omitempty"`
	Q        string     `json:"q"`
	Cat      string     `json:"cat"`
	Answers  []string   `json:"answers"`
	OffTopic bool       `json:"offtopic"`
	Known    float64    `json:"known"`
	KnownOK  bool       `json:"known_ok"`
	Sides    []dumpSide `json:"sides"`
	Hits     []dumpHit  `json:"hits"`
}

// dumpRecall ranks q asked at asked (as the bench asks it) in ten with o (hops deep, no floor, k
// RecallMaxK) and writes the question's dump line to w; d holds the question's own fields.
func dumpRecall(ctx context.Context, w io.Writer, ten *graph.Tenant, q string, asked time.Time, hops int, o search.Options, d dumpQuestion) error {
	tr := &graph.RecallTrace{Explain: true}
	res, err := ten.RecallTraced(ctx, knowmind.RecallQuery{Query: q, K: knowmind.RecallMaxK, Hops: hops, AskedAt: asked}, o, tr)
	if err != nil {
		return err
	}
	d.Q, d.Known, d.KnownOK = q, tr.Known, tr.KnownOK
	for _, s := range tr.Sides {
		if len(s.Terms) == 0 {
			continue
		}
		ds := dumpSide{Lang: s.Lang, Docs: s.Stats.Docs, Terms: s.Terms}
		for _, t := range s.Terms {
			ds.DF = append(ds.DF, s.Stats.DF[t])
		}
		d.Sides = append(d.Sides, ds)
	}
	for i, h := range res.Hits {
		dh := dumpHit{Src: h.Source, Score: h.Score}
		if i < len(tr.From) {
			f := tr.From[i]
			dh.ID, dh.Via, dh.ViaID, dh.Hops, dh.Text, dh.Context = f.ID, f.Via != "", f.Via, f.Hops, f.Text, f.Context
		}
		if i < len(tr.Evidence) {
			e := tr.Evidence[i]
			dh.Cov, dh.Near, dh.Holds = e.Cov, e.Near, e.Holds
		}
		d.Hits = append(d.Hits, dh)
	}
	return json.NewEncoder(w).Encode(d)
}
