package main

import (
	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/search"
)

// ablation turns recall's signals off one by one, for the ablation tables; the zero value is
// the tools' default (search.Default). It builds the search.Options the benchmark passes to
// graph.Tenant.RecallWith: the service itself reads only options.
type ablation struct {
	NoText, NoVector, NoRerank bool
	// NoTextScore fetches the full-text candidates but gives BM25 no say in the ranking.
	NoTextScore    bool
	NoExactVectors bool
	NoSupport      bool
	WithFeedback   bool // pseudo-relevance feedback, off by default
	NoTime         bool
	NoTextDates    bool // the question's time against the memory's own time only
	// NoRelativeDates: a relative time in the question ("last week") is not resolved
	// (Weights.RelativeDates)
	NoRelativeDates bool
	// NoWeekdays: a bare weekday in the question is not resolved (Weights.Weekdays)
	NoWeekdays bool
	// WithRecently: "recently" in the question names the month before (Weights.Recently)
	WithRecently bool
	NoCoverage   bool // semantic signals not scaled by the query's coverage (search.Weights.Coverage)
	// NoVectorCoverage: the hash embedder's vector signal not scaled by it (Weights.VectorCoverage)
	NoVectorCoverage bool
	AsksWhen         float64 // above 0 replaces the when-question signal's weight; below 0 turns it off
	NoSemantic       bool
	SemanticWeight   float64 // above 0: replaces the semantic signal's weight
	NoTitle          bool
	TitleWeight      float64 // above 0: replaces the title field's weight
	// NoTitleNeighbours keeps the title factor to direct hits.
	NoTitleNeighbours  bool
	DgraphVectorScores bool
	DgraphText         bool
	SemanticPool       int // above 0 replaces the pool's size; below 0 turns it off
	SemanticSVD        bool
	ConceptWeight      float64 // above 0 replaces the concept signal's weight; below 0 turns it off
	PoolAsText         float64
	NoSemanticLinks    bool
	// ContextWeight above 0 replaces the context signal's weight (the memory before a
	// candidate in its sequence), below 0 turns it off; Followers likewise the number of best
	// text candidates whose next memory joins the candidates.
	ContextWeight float64
	Followers     int
	ContextMember bool // the context signal a member of the weighted mean, not added to it
	// CoverageFloor raises the floor by the question's word coverage (Weights.CoverageFloor)
	CoverageFloor bool
	// NoCommonWords keeps hits found by one everyday word of a question whose subject the
	// tenant never wrote (Weights.CommonWords)
	NoCommonWords bool
	// Stage2 sets the second stage's weights (Weights.Stage2); the zero value keeps the default.
	Stage2 search.StageWeights
	// MinScore above 0 replaces the tools' floor (knowmind.RecallMinScore), below 0 turns it off.
	MinScore float64
}

// floor is the min_score a recall of a asks for.
func (a ablation) floor() float64 { return override(a.MinScore, knowmind.RecallMinScore) }

// options returns the search options of a.
func (a ablation) options() search.Options {
	o := search.Default()
	p, w := &o.Plan, &o.Weights
	p.Text, p.Vector, p.Rerank = !a.NoText, !a.NoVector, !a.NoRerank
	p.TextScore, p.ExactVectors = !a.NoTextScore, !a.NoExactVectors
	p.DgraphVectorScores, p.DgraphText, p.SemanticSVD = a.DgraphVectorScores, a.DgraphText, a.SemanticSVD
	p.SemanticLinks = !a.NoSemanticLinks
	if a.NoSupport {
		w.Support = 0
	}
	if a.WithFeedback {
		w.Feedback = search.FeedbackWeight
	}
	if a.NoTime {
		w.Time, w.AsksWhen = 0, 0
	}
	if a.NoCoverage {
		w.Coverage = false
	}
	if a.NoVectorCoverage {
		w.VectorCoverage = false
	}
	w.CoverageFloor = a.CoverageFloor
	if a.NoCommonWords {
		w.CommonWords = false
	}
	if a.Stage2.On() {
		w.Stage2 = a.Stage2
	}
	if a.NoTextDates {
		w.TextDates = false
	}
	if a.NoRelativeDates {
		w.RelativeDates = false
	}
	if a.NoWeekdays {
		w.Weekdays = false
	}
	if a.WithRecently {
		w.Recently = true
	}
	w.AsksWhen = override(a.AsksWhen, w.AsksWhen)
	w.Semantic = override(a.SemanticWeight, w.Semantic)
	if a.NoSemantic {
		w.Semantic = 0
	}
	w.Title = override(a.TitleWeight, w.Title)
	if a.NoTitle {
		w.Title = 0
	}
	w.TitleNeighbours = !a.NoTitleNeighbours
	w.SemanticPool = override(a.SemanticPool, w.SemanticPool)
	w.Concept = override(a.ConceptWeight, w.Concept)
	w.PoolAsText = a.PoolAsText
	w.Context = override(a.ContextWeight, w.Context)
	w.Followers = override(a.Followers, w.Followers)
	if a.ContextMember {
		w.ContextAdded = false
	}
	return o
}

// override reads an override of a default: above 0 replaces it, below 0 turns it off (0), 0
// keeps it.
func override[T int | float64](v, def T) T {
	switch {
	case v > 0:
		return v
	case v < 0:
		return 0
	}
	return def
}
