package extract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/knowmind/knowmind"
)

// LLMConfig configures the llm extractor.
type LLMConfig struct {
	URL     string        // base URL of an OpenAI-compatible server (with or without /v1)
	Model   string        // sent as "model"
	APIKey  string        // sent as a Bearer token when set (from the environment, never a flag)
	Timeout time.Duration // per request; default 60 s
	Retries int           // retries of transport errors, 429 and 5xx; default 2
	Backoff time.Duration // first retry delay, doubled each time; default 500 ms
}

// LLM asks a chat completions server for the facts of a text, with a JSON
// schema for the answer (response_format json_schema), and validates what
// comes back. Facts that fail validation (confidence outside 0..1, an entity
// type the domain does not declare, text that is not in the input) become
// drafts with the reason; an answer that is not the schema's JSON at all
// becomes the rules extractor's sentences as drafts with the reason. A server
// that cannot be reached after the retries is an EPROVIDER error (-32000).
type LLM struct {
	cfg      LLMConfig
	endpoint string
	client   *http.Client
}

// NewLLM checks cfg and returns the extractor.
func NewLLM(cfg LLMConfig) (*LLM, error) {
	if !strings.HasPrefix(cfg.URL, "http://") && !strings.HasPrefix(cfg.URL, "https://") {
		return nil, fmt.Errorf("extract: llm URL %q must start with http:// or https://", cfg.URL)
	}
	if cfg.Model == "" {
		return nil, errors.New("extract: llm extractor needs a model name")
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 60 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 2
	}
	if cfg.Backoff == 0 {
		cfg.Backoff = 500 * time.Millisecond
	}
	base := strings.TrimSuffix(strings.TrimRight(cfg.URL, "/"), "/v1")
	return &LLM{cfg: cfg, endpoint: base + "/v1/chat/completions", client: &http.Client{}}, nil
}

// Name is "llm".
func (l *LLM) Name() string { return "llm" }

const llmSystemPrompt = `You extract facts from text for a knowledge base.
Return every self-contained factual statement (decisions, assignments, numbers, dates, properties of people,
organisations and projects) as one fact each; skip greetings, questions, requests and small talk.
"text" is the statement exactly as it appears in the input. "confidence" in 0..1 says how sure you are
that it is a durable fact. "entities" are the people, organisations, projects, ... it names, with a
"type" from this list only: %s.`

// llmSchema is the JSON schema the answer must follow.
func llmSchema(types []string) map[string]any {
	entity := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"type", "name"},
		"properties": map[string]any{"type": map[string]any{"type": "string", "enum": types}, "name": map[string]any{"type": "string"}},
	}
	fact := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"text", "confidence", "entities"},
		"properties": map[string]any{
			"text":       map[string]any{"type": "string"},
			"confidence": map[string]any{"type": "number"},
			"entities":   map[string]any{"type": "array", "items": entity},
		},
	}
	return map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"facts"},
		"properties": map[string]any{"facts": map[string]any{"type": "array", "items": fact}},
	}
}

type chatRequest struct {
	Model          string        `json:"model"`
	Messages       []chatMessage `json:"messages"`
	Temperature    float64       `json:"temperature"`
	ResponseFormat any           `json:"response_format,omitempty"`
	MaxTokens      int           `json:"max_tokens,omitempty"`
}

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type chatResponse struct {
	Choices []struct {
		Message chatMessage `json:"message"`
	} `json:"choices"`
}

type llmFacts struct {
	Facts []struct {
		Text       string   `json:"text"`
		Confidence *float64 `json:"confidence"`
		Entities   []struct {
			Type string `json:"type"`
			Name string `json:"name"`
		} `json:"entities"`
	} `json:"facts"`
}

// Extract asks the server; see LLM.
func (l *LLM) Extract(ctx context.Context, req knowmind.ExtractRequest) ([]knowmind.Candidate, error) {
	types := req.EntityTypes
	body, err := json.Marshal(chatRequest{
		Model: l.cfg.Model,
		Messages: []chatMessage{
			{Role: "system", Content: fmt.Sprintf(llmSystemPrompt, strings.Join(types, ", "))},
			{Role: "user", Content: req.Text},
		},
		ResponseFormat: map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": "facts", "strict": true, "schema": llmSchema(types)}},
	})
	if err != nil {
		return nil, err
	}
	content, err := l.call(ctx, body)
	if err != nil {
		return nil, knowmind.Errorf(knowmind.EPROVIDER, "extraction server unavailable: %v", err)
	}
	var parsed llmFacts
	dec := json.NewDecoder(strings.NewReader(content))
	if err := dec.Decode(&parsed); err != nil || parsed.Facts == nil {
		reason := "llm output invalid: not the facts JSON"
		if err != nil {
			reason = "llm output invalid: " + firstLine(err.Error())
		}
		return l.fallback(ctx, req, reason)
	}
	return validateFacts(parsed, req), nil
}

// fallback keeps the text reviewable when the model's answer is unusable.
func (l *LLM) fallback(ctx context.Context, req knowmind.ExtractRequest, reason string) ([]knowmind.Candidate, error) {
	cands, _ := Rules{}.Extract(ctx, req)
	for i := range cands {
		cands[i].ForceDraft, cands[i].Reason = true, reason
	}
	return cands, nil
}

// validateFacts turns the model's facts into candidates; a fact that breaks
// a rule is kept as a draft with the reason.
func validateFacts(parsed llmFacts, req knowmind.ExtractRequest) []knowmind.Candidate {
	runes := []rune(req.Text)
	var out []knowmind.Candidate
	for _, f := range parsed.Facts {
		if len(out) >= knowmind.MaxCaptureFacts {
			break
		}
		text := strings.TrimSpace(f.Text)
		if text == "" {
			continue
		}
		c := knowmind.Candidate{Text: text, Features: []string{"llm"}}
		var problems []string
		if utf8.RuneCountInString(text) > knowmind.MaxFactChars {
			c.Text = string([]rune(text)[:knowmind.MaxFactChars])
			problems = append(problems, fmt.Sprintf("text longer than %d characters", knowmind.MaxFactChars))
		}
		switch {
		case f.Confidence == nil:
			problems = append(problems, "no confidence")
			c.Confidence = knowmind.DefaultDraftThreshold
		case *f.Confidence < 0 || *f.Confidence > 1:
			problems = append(problems, fmt.Sprintf("confidence %g outside 0..1", *f.Confidence))
			c.Confidence = min(1, max(0, *f.Confidence))
		default:
			c.Confidence = *f.Confidence
		}
		if i := strings.Index(req.Text, text); i >= 0 {
			start := utf8.RuneCountInString(req.Text[:i])
			c.Span = knowmind.Span{Start: start, End: start + utf8.RuneCountInString(text)}
		} else if len(runes) > 0 {
			problems = append(problems, "text not found in the input")
		}
		for _, e := range f.Entities {
			name := strings.TrimSpace(e.Name)
			id := knowmind.EntitySlug(name)
			switch {
			case id == "" || utf8.RuneCountInString(name) > knowmind.MaxEntityNameChars:
				problems = append(problems, fmt.Sprintf("invalid entity name %q", name))
			case len(req.EntityTypes) > 0 && !slices.Contains(req.EntityTypes, e.Type):
				problems = append(problems, fmt.Sprintf("entity type %q not declared", e.Type))
			case len(c.Entities) < knowmind.MaxEntitiesPerFact:
				for _, k := range req.Known { // a known entity keeps its id
					if k.Type == e.Type && (k.ID == id || slices.ContainsFunc(k.Aliases, func(a string) bool { return knowmind.EntitySlug(a) == id })) {
						id = k.ID
					}
				}
				c.Entities = append(c.Entities, knowmind.CandidateEntity{Type: e.Type, ID: id, Name: name})
			}
		}
		if len(problems) > 0 {
			c.ForceDraft, c.Reason = true, "llm output invalid: "+strings.Join(problems, "; ")
		}
		out = append(out, c)
	}
	return out
}

// call posts the request, retrying transport errors, 429 and 5xx with
// exponential backoff, and returns the first choice's content.
func (l *LLM) call(ctx context.Context, body []byte) (string, error) {
	delay := l.cfg.Backoff
	for attempt := 0; ; attempt++ {
		content, retry, err := l.post(ctx, body)
		if err == nil {
			return content, nil
		}
		if !retry || attempt >= l.cfg.Retries || ctx.Err() != nil {
			if attempt > 0 {
				err = fmt.Errorf("%w (after %d attempts)", err, attempt+1)
			}
			return "", err
		}
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		delay *= 2
	}
}

func (l *LLM) post(ctx context.Context, body []byte) (content string, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, l.cfg.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, l.endpoint, bytes.NewReader(body))
	if err != nil {
		return "", false, err
	}
	req.Header.Set("Content-Type", "application/json")
	if l.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+l.cfg.APIKey)
	}
	resp, err := l.client.Do(req)
	if err != nil {
		return "", true, fmt.Errorf("POST %s: %w", l.endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return "", true, fmt.Errorf("read answer of %s: %w", l.endpoint, err)
	}
	if resp.StatusCode != http.StatusOK {
		retry := resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return "", retry, fmt.Errorf("POST %s (model %s): HTTP %d", l.endpoint, l.cfg.Model, resp.StatusCode)
	}
	var cr chatResponse
	if err := json.Unmarshal(raw, &cr); err != nil || len(cr.Choices) == 0 {
		// The server answered, but not as a chat completion: its content is
		// treated as invalid output (drafts), not as an outage.
		return string(raw), false, nil
	}
	return cr.Choices[0].Message.Content, false, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if utf8.RuneCountInString(s) > 200 {
		s = string([]rune(s)[:200])
	}
	return s
}
