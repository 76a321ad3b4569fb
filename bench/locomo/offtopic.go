package locomo

import "context"

// OffTopic are English questions that no LoCoMo conversation answers: general knowledge and
// technical how-tos. Several share everyday words with the conversations ("half", "life",
// "point", "bones", "sugar", "managed"), as a real off-topic question does; a recall should
// still answer each with nothing above the floor.
var OffTopic = []string{
	"What is the boiling point of mercury?",
	"How many moons does Neptune have?",
	"What is the capital of Kazakhstan?",
	"Who signed the Treaty of Westphalia?",
	"What is the half-life of carbon-14?",
	"Which enzyme splits starch into sugar?",
	"How do I configure a VLAN on a managed switch?",
	"What is the chemical formula of sulfuric acid?",
	"How many bones are in the adult human skeleton?",
	"Who invented the telephone?",
	"What is the torque spec for a cylinder head bolt?",
	"How does a nuclear reactor control its chain reaction?",
}

// OffTopicReport counts, over every conversation, the off-topic questions that got any hit.
type OffTopicReport struct {
	Asked    int // off-topic questions asked: len(OffTopic) per conversation
	WithHits int // of those, how many got at least one hit
	Hits     int // hits over all of them
}

// EvaluateOffTopic asks rank each of OffTopic in every conversation (category 0, no evidence).
func EvaluateOffTopic(ctx context.Context, convs []Conversation, rank Ranker) (OffTopicReport, error) {
	var r OffTopicReport
	for ci := range convs {
		for _, q := range OffTopic {
			ranked, err := rank(ctx, &convs[ci], Question{Text: q})
			if err != nil {
				return r, err
			}
			r.Asked++
			if len(ranked) > 0 {
				r.WithHits++
				r.Hits += len(ranked)
			}
		}
	}
	return r, nil
}
