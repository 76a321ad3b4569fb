package extract

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
)

// fakeChat serves /v1/chat/completions answering content, after failing the
// first failures calls with HTTP 503; it records the last request.
func fakeChat(t *testing.T, content string, failures int32) (*httptest.Server, *chatRequest) {
	var calls atomic.Int32
	last := &chatRequest{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Header.Get("Authorization") != "Bearer k" {
			http.Error(w, "bad path or key", http.StatusUnauthorized)
			return
		}
		if calls.Add(1) <= failures {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		_ = json.NewDecoder(r.Body).Decode(last)
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(srv.Close)
	return srv, last
}

func newTestLLM(t *testing.T, url string) *LLM {
	l, err := NewLLM(LLMConfig{URL: url, Model: "m", APIKey: "k", Timeout: 2 * time.Second, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLLMExtract(t *testing.T) {
	text := "Hallo! Lisa Müller leitet das Projekt Apollo. Das Budget beträgt 5 Mio."
	answer := `{"facts":[
	 {"text":"Lisa Müller leitet das Projekt Apollo.","confidence":0.9,"entities":[{"type":"person","name":"Lisa Müller"},{"type":"project","name":"Apollo"}]},
	 {"text":"Das Budget beträgt 5 Mio.","confidence":1.7,"entities":[]},
	 {"text":"Apollo is great","confidence":0.5,"entities":[{"type":"planet","name":"Mars"}]}]}`
	srv, last := fakeChat(t, answer, 1) // one 503 first: retried
	cands, err := newTestLLM(t, srv.URL).Extract(context.Background(), knowmind.ExtractRequest{Text: text, EntityTypes: defaultTypes})
	if err != nil {
		t.Fatal(err)
	}
	if last.Model != "m" || !strings.Contains(last.Messages[0].Content, "person, organisation, project, place") {
		t.Fatalf("request did not carry model and entity types: %+v", last)
	}
	if len(cands) != 3 {
		t.Fatalf("want 3 candidates, got %d", len(cands))
	}
	if c := cands[0]; c.ForceDraft || c.Confidence != 0.9 || len(c.Entities) != 2 || c.Entities[0].ID != "lisa-mueller" ||
		c.Span != (knowmind.Span{Start: 7, End: 45}) {
		t.Fatalf("valid fact: %s span %v", describe(c), c.Span)
	}
	if c := cands[1]; !c.ForceDraft || !strings.Contains(c.Reason, "confidence 1.7 outside 0..1") {
		t.Fatalf("bad confidence must become a draft with the reason: %+v", c)
	}
	if c := cands[2]; !c.ForceDraft || !strings.Contains(c.Reason, `entity type "planet" not declared`) || !strings.Contains(c.Reason, "not found in the input") {
		t.Fatalf("undeclared type and invented text must be named: %+v", c)
	}
}

func TestLLMInvalidOutputBecomesDrafts(t *testing.T) {
	srv, _ := fakeChat(t, "Sure! Here are the facts: Lisa leads Apollo.", 0)
	cands, err := newTestLLM(t, srv.URL).Extract(context.Background(), knowmind.ExtractRequest{
		Text: "Lisa Müller leitet seit dem 1. April das Projekt.", EntityTypes: defaultTypes})
	if err != nil {
		t.Fatal(err)
	}
	if len(cands) != 1 || !cands[0].ForceDraft || !strings.HasPrefix(cands[0].Reason, "llm output invalid") {
		t.Fatalf("invalid output must become drafts with the reason: %+v", cands)
	}
}

func TestLLMServerDown(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	_, err := newTestLLM(t, url).Extract(context.Background(), knowmind.ExtractRequest{Text: "x"})
	if knowmind.ErrorCode(err) != knowmind.EPROVIDER {
		t.Fatalf("want EPROVIDER, got %v", err)
	}
	srv2, _ := fakeChat(t, "{}", 100) // always 503
	if _, err := newTestLLM(t, srv2.URL).Extract(context.Background(), knowmind.ExtractRequest{Text: "x"}); knowmind.ErrorCode(err) != knowmind.EPROVIDER || !strings.Contains(err.Error(), "after 3 attempts") {
		t.Fatalf("want EPROVIDER after 3 attempts, got %v", err)
	}
}
