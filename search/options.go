// Package search is recall's retrieval engine without the store: which query words the text
// step matches, how many candidates each step proposes, the scoring of the candidates the
// store returned (BM25 as a share of the ideal score, word vectors, the semantic model, the
// title field, feedback, time) and their fusion into one ranked list, and the cross-encoder's
// reordering. It knows nothing of Dgraph, HTTP or MCP: package graph sends the DQL, decodes the
// answer into Candidates and calls Fuse. docs/recall.md has the design and the measurements
// behind every constant here.
package search

import (
	"time"

	"github.com/knowmind/knowmind"
)

// Weights are the signals' weights in the fusion against full text's 1 (0 turns a signal off).
// Default() holds the tools'; the benchmark passes its own to print the ablation table.
type Weights struct {
	// Semantic: the text candidates' cosine to the query under the tenant's co-occurrence word
	// vectors (package wordvec).
	Semantic float64
	// Concept: the text candidates' and the semantic pool's cosine under the tenant's PPMI+SVD
	// model (package semvec), a signal beside the word vectors'.
	Concept float64
	// Title: the title field as a factor (rank.Signals.Title); TitleNeighbours applies it to
	// graph neighbours too.
	Title           float64
	TitleNeighbours bool
	// Support: the evidence of neighbouring hits (rank.Signals.Support).
	Support float64
	// Time: how well a memory's time matches the time the question names (package timeq).
	Time float64
	// TextDates: the time a question names is matched against the days the memory's text
	// names (Memory.dates) too, not only against its own time.
	TextDates bool
	// RelativeDates: a relative time the question names ("last week", "letzte Woche",
	// "gestern") is resolved against the time of asking (knowmind.RecallQuery.AskedAt) and
	// matched as a written date is (QuestionTime).
	RelativeDates bool
	// Weekdays: with RelativeDates, a bare weekday in a question told in the past ("What did
	// Caroline do on Friday?") names the last such day (timeq.Vague).
	Weekdays bool
	// Recently: with RelativeDates, "recently", "kürzlich", "neulich" name the month before the
	// time of asking (timeq.Vague). Off by default: in a conversation "recently" mostly means
	// recent in the conversation, not before the question (docs/recall.md, "Time as data").
	Recently bool
	// AsksWhen: a question that asks for a time without naming one ("When did …?") raises
	// the memories whose text names a day by this factor (TimeSignals, rank.Signals.Dated).
	AsksWhen float64
	// Context: the memory before a candidate in its sequence (a conversation's turns, a
	// document's parts) scored against the question, a signal of this weight for the
	// candidate (rank.Signals.Context): the question a reply answers carries the reply's
	// topic. Followers is how many of the best text candidates per language bring the memory
	// after them in their sequence in as a candidate (the reply to a matching question).
	Context   float64
	Followers int
	// ContextAdded adds the context signal to the weighted mean of the others instead of
	// making it a member (rank.Signals.ContextAdded).
	ContextAdded bool
	// Feedback: pseudo-relevance feedback (package prf); it needs the candidates' text, which
	// only Dgraph's full-text step reads, so a weight above 0 implies Plan.DgraphText.
	Feedback float64
	// Coverage: the semantic and concept signals count as shares of the whole query, scaled
	// by how much of its information the tenant's vocabulary holds (Input.Coverage).
	Coverage bool
	// VectorCoverage scales a lexical embedder's vector signal by the same coverage
	// (Input.VectorCoverage); model embedders are never scaled.
	VectorCoverage bool
	// CoverageFloor raises the floor of a question the tenant's words hold only in part
	// (Floor; lexical evidence only). Off: on the German check it left out answers to questions
	// worded apart from their memories (docs/recall.md, "The floor").
	CoverageFloor bool
	// CommonWords leaves out a hit found by one query term that stands for an everyday word of
	// a question whose subject the tenant never wrote (CommonMatches, Input.Common); lexical
	// evidence only, and only with word levels (graph.Config.WordLevels).
	CommonWords bool
	// PoolAsText scores the semantic pool's chunks that no text signal found in the text signal
	// too, as PoolAsText × their cosine.
	PoolAsText float64
	// Stage2: the second stage (search.Stage2): the first StagePool fused hits re-scored by
	// their query terms' IDF coverage and proximity in the text; the zero value turns it off.
	Stage2 StageWeights
	// SemanticPool is how many chunks the semantic model's exact scan proposes as further text
	// candidates (0: none).
	SemanticPool int
}

// Plan says where one recall's candidates come from. Default() is the tools' plan; the other
// settings exist for the benchmarks' comparisons.
type Plan struct {
	Text   bool // full-text candidates (BM25)
	Vector bool // vector candidates
	// TextScore: BM25 scores the text candidates. Without it they still join the vector
	// re-score and seed the graph: the vector signal as full recall computes it.
	TextScore bool
	// ExactVectors: the service's exact vector search (as Config.NoExactVectors turns off);
	// without it the vector candidates come from Dgraph's HNSW and the full-text pools.
	ExactVectors bool
	// DgraphVectorScores keeps the exact search but lets Dgraph re-score its candidates with
	// HNSW's and the text candidates'.
	DgraphVectorScores bool
	// DgraphText takes the full-text candidates from Dgraph's anyoftext instead of the
	// service's own text index.
	DgraphText bool
	// SemanticSVD scores the semantic signal with the PPMI+SVD model instead of the word vectors.
	SemanticSVD bool
	// SemanticLinks builds the semantic model with the links between memories as the chunks'
	// context (semvec.Doc.Near).
	SemanticLinks bool
	// Rerank: the cross-encoder reorders the fused list when one is configured.
	Rerank bool
	// ScoreAfter computes the semantic and title scores after the store's answer instead of
	// while its request is in flight (Input.ScoreAhead); the result is the same.
	ScoreAfter bool
}

// Options are one recall's plan and weights.
type Options struct {
	Plan    Plan
	Weights Weights
}

// Default returns the tools' options: every signal on at its measured weight (docs/recall.md).
func Default() Options {
	return Options{
		Plan: Plan{Text: true, Vector: true, TextScore: true, ExactVectors: true, SemanticLinks: true, Rerank: true},
		Weights: Weights{
			Semantic:        semanticWeight,
			Concept:         conceptWeight,
			Title:           titleWeight,
			TitleNeighbours: true,
			Support:         graphSupport,
			Time:            timeWeight,
			TextDates:       true,
			RelativeDates:   true,
			Weekdays:        true,
			AsksWhen:        asksWhenWeight,
			Coverage:        true,
			VectorCoverage:  true,
			CommonWords:     true,
			SemanticPool:    semanticPool,
			Context:         contextWeight,
			ContextAdded:    true,
			Followers:       contextFollowers,
		},
	}
}

// ServedText tells whether the service's own text index proposes the text candidates (false:
// Dgraph's anyoftext does).
func (o Options) ServedText() bool { return !o.Plan.DgraphText && o.Weights.Feedback <= 0 }

// The defaults' values; docs/recall.md has the measurements behind each.
const (
	semanticWeight = 0.5
	conceptWeight  = 0.25
	titleWeight    = 0.5
	graphSupport   = 1.0
	timeWeight     = 0.5
	asksWhenWeight = 0.5
	semanticPool   = 30
	contextWeight  = 0.5
	// contextFollowers: as many as seed the graph, the candidates that can end near the top.
	contextFollowers = GraphSeeds
	// FeedbackWeight is the feedback signal's weight when the benchmark turns it on.
	FeedbackWeight = 0.15
)

// TimeSlack: a memory's time matches the time a question names fully inside the named span,
// half at TimeSlack outside it.
const TimeSlack = 72 * time.Hour

// Candidate budgets. They do not depend on k: the first n hits of a recall for k are the
// answer for n, whatever k (knowmind.RecallMaxK stays well below each budget).
const (
	// VectorCandidates is how many chunks each vector step (HNSW, the exact search) proposes;
	// the over-fetch also absorbs chunks whose memory the filters drop.
	VectorCandidates = 100
	// TextCandidates is how many chunks the service's text search proposes per language:
	// exactly the best by BM25.
	TextCandidates = VectorCandidates
	// GraphSeeds is how many of the strongest vector chunks, and at most how many chunks holding
	// the query's rarest words, seed the graph expansion. A neighbour scores below the hit that
	// reached it, so only hits that can end near the top matter as seeds; expanding from every
	// candidate made the 2-hop neighbourhood most of a 10k-memory graph.
	GraphSeeds = 20
	// TextBudget bounds the chunks Dgraph's full-text step fetches per language: the query
	// terms are chosen rarest first while their summed document frequency stays within it.
	TextBudget = 400
	// TextCap is the hard limit of Dgraph's full-text step per language (first: N takes the
	// lowest uids, not the best, so it must rarely bind: TextBudget keeps it from doing so).
	TextCap = 1000
	// VectorPoolBudget, VectorPoolCap: the chunks holding the query's words, chosen rarest first
	// with a wider budget, join the exact vector re-score when there is no exact search.
	VectorPoolBudget = 2000
	VectorPoolCap    = 3000
	// RerankDepth is how many fused candidates the cross-encoder reads: one model run per
	// candidate, so it bounds recall's latency; it is the largest k, so that the reranked
	// order does not depend on k.
	RerankDepth = knowmind.RecallMaxK
)

// Pseudo-relevance feedback (package prf): the best feedbackDocs text candidates of the first
// pass give up to feedbackTerms words (each in at least feedbackMinDocs of them).
const (
	feedbackDocs    = 5
	feedbackTerms   = 5
	feedbackMinDocs = 2
)
