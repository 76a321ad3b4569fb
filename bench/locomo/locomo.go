// Package locomo loads LoCoMo-format conversations (snap-research/LoCoMo, see
// ../shared/data/locomo/README.md) and scores retrieval against their evidence turns without an
// LLM: recall@1/5/10 and MRR@10, per question category and overall.
//
// It knows nothing of how turns are stored or searched: a Ranker returns dia_ids best first, and
// Evaluate scores them. BM25Baseline is the in-memory reference ranker; the recall bench command
// supplies rankers that ask the real service.
package locomo

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Conversation is one LoCoMo sample: its turns in session order and its questions.
type Conversation struct {
	SampleID           string
	SpeakerA, SpeakerB string
	Turns              []Turn
	Questions          []Question
}

// Turn is one utterance. DiaID is normalised ("D<session>:<turn>").
type Turn struct {
	DiaID       string
	Session     int
	SessionDate string // as written in the data, e.g. "1:56 pm on 8 May, 2023"
	Speaker     string
	Text        string
	Caption     string // BLIP caption of a shared image, "" when none
}

// Question is one QA item. Evidence holds the normalised dia_ids of the turns that answer it,
// only those that exist in the conversation.
type Question struct {
	Text     string
	Answer   string // "" for category 5 (adversarial), which has none
	Evidence []string
	Category int
}

// Categories are the scored question categories with the names used by LoCoMo evaluations
// (category 5, adversarial, has no answer and is not scored).
var Categories = []struct {
	ID   int
	Name string
}{{1, "multi-hop"}, {2, "temporal"}, {3, "open-domain"}, {4, "single-hop"}}

// Load reads a LoCoMo-format JSON file.
func Load(path string) ([]Conversation, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("locomo: load: %w", err)
	}
	defer f.Close()
	convs, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("locomo: load %s: %w", path, err)
	}
	return convs, nil
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// Parse decodes LoCoMo-format JSON: an array of {sample_id, conversation, qa}.
func Parse(r io.Reader) ([]Conversation, error) {
	var raw []struct {
		SampleID     string                     `json:"sample_id"`
		Conversation map[string]json.RawMessage `json:"conversation"`
		QA           []struct {
			Question string          `json:"question"`
			Answer   json.RawMessage `json:"answer"`
			Evidence []string        `json:"evidence"`
			Category int             `json:"category"`
		} `json:"qa"`
	}
	if err := json.NewDecoder(r).Decode(&raw); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	convs := make([]Conversation, 0, len(raw))
	for _, item := range raw {
		c := Conversation{SampleID: item.SampleID}
		_ = json.Unmarshal(item.Conversation["speaker_a"], &c.SpeakerA)
		_ = json.Unmarshal(item.Conversation["speaker_b"], &c.SpeakerB)

		var sessions []int
		for key := range item.Conversation {
			if m := sessionKey.FindStringSubmatch(key); m != nil {
				n, _ := strconv.Atoi(m[1])
				sessions = append(sessions, n)
			}
		}
		sort.Ints(sessions)
		known := map[string]bool{}
		for _, s := range sessions {
			var date string
			_ = json.Unmarshal(item.Conversation[fmt.Sprintf("session_%d_date_time", s)], &date)
			var turns []struct {
				Speaker string `json:"speaker"`
				DiaID   string `json:"dia_id"`
				Text    string `json:"text"`
				Caption string `json:"blip_caption"`
			}
			if err := json.Unmarshal(item.Conversation[fmt.Sprintf("session_%d", s)], &turns); err != nil {
				return nil, fmt.Errorf("%s session_%d: %w", item.SampleID, s, err)
			}
			for _, t := range turns {
				ids := DiaIDs(t.DiaID)
				if len(ids) != 1 {
					return nil, fmt.Errorf("%s session_%d: bad dia_id %q", item.SampleID, s, t.DiaID)
				}
				known[ids[0]] = true
				c.Turns = append(c.Turns, Turn{DiaID: ids[0], Session: s, SessionDate: date,
					Speaker: t.Speaker, Text: t.Text, Caption: t.Caption})
			}
		}

		for _, qa := range item.QA {
			q := Question{Text: qa.Question, Category: qa.Category, Answer: answerText(qa.Answer)}
			for _, e := range qa.Evidence {
				for _, id := range DiaIDs(e) {
					if known[id] && !slices.Contains(q.Evidence, id) {
						q.Evidence = append(q.Evidence, id)
					}
				}
			}
			c.Questions = append(c.Questions, q)
		}
		convs = append(convs, c)
	}
	return convs, nil
}

var diaID = regexp.MustCompile(`D:?(\d+):(\d+)`)

// DiaIDs extracts the normalised dia_ids from an evidence entry. The published data has a few
// malformed ones ("D8:6; D9:17", "D:11:26", "D30:05", a bare "D"); this reads them as meant and
// drops what cannot be read.
func DiaIDs(s string) []string {
	var ids []string
	for _, m := range diaID.FindAllStringSubmatch(s, -1) {
		session, _ := strconv.Atoi(m[1])
		turn, _ := strconv.Atoi(m[2])
		ids = append(ids, fmt.Sprintf("D%d:%d", session, turn))
	}
	return ids
}

func answerText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw)) // numbers, e.g. a year
}

// TurnNumber is a turn's number in its session, from its dia_id ("D3:7" → 7; 0 when unreadable).
func TurnNumber(t Turn) int {
	if m := diaID.FindStringSubmatch(t.DiaID); m != nil {
		n, _ := strconv.Atoi(m[2])
		return n
	}
	return 0
}
