package extract

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/knowmind/knowmind"
)

// The llm briefing (knowmind_briefing with a model configured): the model rewrites the
// extractive briefing — already filtered, prioritised and cut to the token budget, every item
// citing its ids — as a short briefing that keeps the citations. Its answer is checked: it
// must cite, and cite only ids the extractive briefing holds; otherwise it is refused and the
// caller answers the extractive briefing saying why.

const briefingSystemPrompt = `You write a briefing for someone about to continue work, from the items of a knowledge base below.
Use only what the items say; do not add facts. Lead with what needs action (due goals, conflicts, drafts to review),
then what is new. Write short paragraphs or bullets in the language of the items, at most %d tokens.
After each statement cite its sources exactly as the items do, in square brackets, e.g. [memory <id>] or
[goal <id>; memory <id>]. Cite only ids that appear in the items.`

// citeGroup is a bracketed citation; citeRef one "memory X", "goal X" or "draft X" in it.
var (
	citeGroup = regexp.MustCompile(`\[([^\[\]]{1,1000})\]`)
	citeRef   = regexp.MustCompile(`\b(?:memory|goal|draft) ([A-Za-z0-9][A-Za-z0-9_.:-]*)`)
)

// citedIDs are the ids cited in the text's square brackets, in order.
func citedIDs(text string) []string {
	var ids []string
	for _, g := range citeGroup.FindAllStringSubmatch(text, -1) {
		for _, m := range citeRef.FindAllStringSubmatch(g[1], -1) {
			ids = append(ids, strings.TrimRight(m[1], ".:"))
		}
	}
	return ids
}

// Model names the model that writes briefings.
func (l *LLM) Model() string { return l.cfg.Model }

// WriteBriefing asks the model to write b (an extractive briefing) as prose; see above.
func (l *LLM) WriteBriefing(ctx context.Context, b knowmind.Briefing) (string, error) {
	body, err := json.Marshal(chatRequest{
		Model: l.cfg.Model,
		Messages: []chatMessage{
			{Role: "system", Content: fmt.Sprintf(briefingSystemPrompt, b.MaxTokens)},
			{Role: "user", Content: b.Text},
		},
		MaxTokens: b.MaxTokens,
	})
	if err != nil {
		return "", err
	}
	text, err := l.call(ctx, body)
	if err != nil {
		return "", knowmind.Errorf(knowmind.EPROVIDER, "briefing model unavailable: %v", err)
	}
	text = strings.TrimSpace(text)
	known := b.CitedIDs()
	cited := 0
	for _, id := range citedIDs(text) {
		if !known[id] {
			return "", fmt.Errorf("the model's briefing cites %q, which is not in its input", id)
		}
		cited++
	}
	switch {
	case text == "":
		return "", fmt.Errorf("the model's briefing is empty")
	case cited == 0 && len(known) > 0:
		return "", fmt.Errorf("the model's briefing cites no memory, goal or draft id")
	case knowmind.ApproxTokens(text) > b.MaxTokens*5/4:
		return "", fmt.Errorf("the model's briefing is %d tokens, over the budget of %d", knowmind.ApproxTokens(text), b.MaxTokens)
	}
	return text, nil
}
