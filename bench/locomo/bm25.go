package locomo

import (
	"context"

	"github.com/knowmind/knowmind/bm25"
)

// TurnText chooses what of a turn is stored and searched.
type TurnText func(Turn) string

// TextOnly is the turn's words, nothing else — what the README's "store every turn" means.
func TextOnly(t Turn) string { return t.Text }

// WithSpeaker prefixes the speaker's name, as a memory of "who said what" would read.
func WithSpeaker(t Turn) string { return t.Speaker + ": " + t.Text }

// WithCaption appends the caption of a shared image, which LoCoMo questions sometimes ask about.
func WithCaption(t Turn) string {
	if t.Caption == "" {
		return t.Text
	}
	return t.Text + " [image: " + t.Caption + "]"
}

// BM25Baseline returns a Ranker that scores every turn of the question's conversation with
// in-memory BM25 (each conversation one tenant, every turn one document, analysed as lang),
// the reference the service's text signal is measured against. Like a full-text index, it
// returns only the turns that share an analysed term with the question.
func BM25Baseline(convs []Conversation, lang string, text TurnText, p bm25.Params) Ranker {
	var ix bm25.Index
	docs := make(map[string][]bm25.Doc, len(convs))
	for _, c := range convs {
		for _, t := range c.Turns {
			tokens := bm25.Analyze(lang, text(t))
			ix.Add(c.SampleID, t.DiaID, lang, tokens)
			docs[c.SampleID] = append(docs[c.SampleID], bm25.Doc{ID: t.DiaID, Tokens: tokens})
		}
	}
	return func(_ context.Context, conv *Conversation, q Question) ([]string, error) {
		query := bm25.Analyze(lang, q.Text)
		scored := bm25.Score(query, docs[conv.SampleID], ix.Stats(conv.SampleID, lang, query...), p)
		var ids []string
		for _, s := range scored {
			if s.Score <= 0 {
				break // sorted: the rest share no term with the question
			}
			ids = append(ids, s.ID)
		}
		return ids, nil
	}
}
