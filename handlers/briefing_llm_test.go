package handlers

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/extract"
)

// fakeBriefingModel is an OpenAI-compatible chat completions server: in mode "ok" it answers
// a briefing citing the first citation of its input, in "invent" one citing an id that is
// not there, in "down" HTTP 503.
func fakeBriefingModel(t *testing.T) (*httptest.Server, *atomic.Value, *atomic.Int32) {
	mode := &atomic.Value{}
	mode.Store("ok")
	calls := &atomic.Int32{}
	first := regexp.MustCompile(`\[[^\]]+\]`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		var content string
		switch mode.Load() {
		case "down":
			http.Error(w, "overloaded", http.StatusServiceUnavailable)
			return
		case "invent":
			content = "Everything is fine [memory 00000000-not-there]."
		default:
			content = "Most important first: " + first.FindString(req.Messages[1].Content)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(srv.Close)
	return srv, mode, calls
}

// With a model configured the briefing is written by it and cites the input's ids; when the
// provider fails or its answer cites an id it was not given, the answer is the extractive
// briefing saying why; mode extractive never asks the model.
func TestBriefingWithModelThroughMCP(t *testing.T) {
	srv, mode, calls := fakeBriefingModel(t)
	model, err := extract.NewLLM(extract.LLMConfig{URL: srv.URL, Model: "brief-1", Timeout: 2 * time.Second, Retries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := newEngineClient(t, Extractors{Briefing: model})
	// Nothing stored: nothing to write from, the model is not asked.
	var b knowmind.Briefing
	structured(t, callTool(t, c.url, c.read, "knowmind_briefing", map[string]any{}), &b)
	if b.Mode != knowmind.BriefingExtractive || b.Fallback != "" || calls.Load() != 0 {
		t.Fatalf("empty briefing: mode %q fallback %q, %d model calls", b.Mode, b.Fallback, calls.Load())
	}
	id := c.store("Kantine", "Die Kantine schließt freitags um 14 Uhr.")

	b = knowmind.Briefing{}
	structured(t, callTool(t, c.url, c.read, "knowmind_briefing", map[string]any{}), &b)
	if b.Mode != knowmind.BriefingLLM || b.Model != "brief-1" || b.Text != "Most important first: [memory "+id+"]" ||
		b.Fallback != "" || !strings.Contains(b.Note, "brief-1") || section(b, knowmind.SectionMemories) == nil || b.Tokens <= 0 {
		t.Fatalf("llm briefing: %+v", b)
	}

	mode.Store("down")
	b = knowmind.Briefing{}
	structured(t, callTool(t, c.url, c.read, "knowmind_briefing", map[string]any{}), &b)
	if b.Mode != knowmind.BriefingExtractive || !strings.Contains(b.Fallback, "brief-1 failed (provider unavailable)") ||
		!strings.Contains(b.Text, "[memory "+id+"]") || !strings.Contains(b.Note, "extractive") {
		t.Fatalf("provider down: mode %q fallback %q text %q", b.Mode, b.Fallback, b.Text)
	}

	mode.Store("invent")
	b = knowmind.Briefing{}
	structured(t, callTool(t, c.url, c.read, "knowmind_briefing", map[string]any{}), &b)
	if b.Mode != knowmind.BriefingExtractive || !strings.Contains(b.Fallback, "not in its input") {
		t.Fatalf("invented citation: mode %q fallback %q", b.Mode, b.Fallback)
	}

	mode.Store("ok")
	before := calls.Load()
	b = knowmind.Briefing{}
	structured(t, callTool(t, c.url, c.read, "knowmind_briefing", map[string]any{"mode": "extractive"}), &b)
	if b.Mode != knowmind.BriefingExtractive || b.Fallback != "" || calls.Load() != before {
		t.Fatalf("mode extractive: mode %q fallback %q, model asked %d times", b.Mode, b.Fallback, calls.Load()-before)
	}
}

// Without a model, mode llm is a parameter error; an unknown mode too.
func TestBriefingModeWithoutModel(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_briefing", map[string]any{"mode": "llm"}), jsonrpc.CodeInvalidParams, "mode")
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_briefing", map[string]any{"mode": "poem"}), jsonrpc.CodeInvalidParams, "mode")
}
