package handlers

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/extract"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// engineClient calls the memory engine's tools as one tenant's agent.
type engineClient struct {
	*recallClient
}

func newEngineClient(t *testing.T, x Extractors) *engineClient {
	srv := newTestServer(t, func(d *Deps) { d.Extractors = x })
	tenant := dgraphtest.TenantName(t)
	return &engineClient{&recallClient{t: t, url: srv.URL + "/api/mcp/v1",
		write: newToken(t, tenant, knowmind.ScopeWrite), read: newToken(t, tenant, knowmind.ScopeRead)}}
}

func (c *engineClient) capture(args map[string]any) knowmind.CaptureResult {
	c.t.Helper()
	var res knowmind.CaptureResult
	structured(c.t, callTool(c.t, c.url, c.write, "knowmind_capture", args), &res)
	if res.Stored == nil || res.Drafts == nil || res.PMMatches == nil || res.Conflicts == nil {
		c.t.Fatalf("capture result has null arrays: %+v", res)
	}
	return res
}

func (c *engineClient) review(id, action, text string) knowmind.ReviewResult {
	c.t.Helper()
	args := map[string]any{"draft_id": id, "action": action}
	if text != "" {
		args["text"] = text
	}
	var res knowmind.ReviewResult
	structured(c.t, callTool(c.t, c.url, c.write, "knowmind_review_draft", args), &res)
	return res
}

func (c *engineClient) drafts(status string) []knowmind.Draft {
	c.t.Helper()
	args := map[string]any{}
	if status != "" {
		args["status"] = status
	}
	var res ListDraftsResult
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_list_drafts", args), &res)
	return res.Drafts
}

func (c *engineClient) entities(typ string) []knowmind.Entity {
	c.t.Helper()
	args := map[string]any{}
	if typ != "" {
		args["type"] = typ
	}
	var res ListEntitiesResult
	structured(c.t, callTool(c.t, c.url, c.read, "knowmind_list_entities", args), &res)
	return res.Entities
}

// factStarting finds the fact whose text starts with prefix.
func factStarting(t *testing.T, facts []knowmind.CapturedFact, prefix string) knowmind.CapturedFact {
	t.Helper()
	for _, f := range facts {
		if strings.HasPrefix(f.Text, prefix) {
			return f
		}
	}
	t.Fatalf("no fact starting %q in %+v", prefix, facts)
	return knowmind.CapturedFact{}
}

const meetingNote = `Hallo zusammen!

Protokoll Jour fixe 12.03.2026
- Lisa Müller übernimmt die Projektleitung für den Relaunch ab dem 1. April.
- Wir haben beschlossen, das Budget auf 50.000 Euro zu erhöhen.
- Die Acme GmbH liefert die Server bis zum 15. Mai.
- Tom Schmidt ist neuer Ansprechpartner bei der Acme GmbH.
- Vielleicht verschieben wir den Launch auf Juni.
Wer kümmert sich um die Präsentation?
Ok.
Viele Grüße, Anna`

// TestCaptureGermanMeetingNote: the rules extractor turns a German meeting
// note into stored facts, drafts and entities; drafts stay out of recall
// until accepted; reviews accept, reject and edit.
func TestCaptureGermanMeetingNote(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	res := c.capture(map[string]any{"text": meetingNote, "source": "jour-fixe", "category": "meeting",
		"occurred_at": "2026-03-12T10:00:00Z"})
	if res.Extractor != "rules" || res.Thresholds != (knowmind.Thresholds{Store: 0.85, Draft: 0.40}) || len(res.PMMatches) != 0 {
		t.Fatalf("extractor %q thresholds %+v pm %v", res.Extractor, res.Thresholds, res.PMMatches)
	}
	if len(res.Stored) != 2 || len(res.Drafts) != 3 {
		t.Fatalf("want 2 stored and 3 drafts, got %+v", res)
	}
	lisa := factStarting(t, res.Stored, "Lisa Müller übernimmt")
	if lisa.EntityType != "person" || lisa.EntityID != "lisa-mueller" || lisa.Confidence < 0.85 ||
		!slices.Contains(lisa.Entities, knowmind.EntityRef{Type: "person", ID: "lisa-mueller"}) {
		t.Fatalf("Lisa's fact: %+v", lisa)
	}
	if got := string([]rune(meetingNote)[lisa.Span.Start:lisa.Span.End]); got != lisa.Text {
		t.Fatalf("span %v gives %q", lisa.Span, got)
	}
	acme := factStarting(t, res.Stored, "Die Acme GmbH liefert")
	if acme.EntityID != "acme-gmbh" || acme.EntityType != "organisation" {
		t.Fatalf("Acme's fact: %+v", acme)
	}
	budget := factStarting(t, res.Drafts, "Wir haben beschlossen")
	tom := factStarting(t, res.Drafts, "Tom Schmidt")
	protocol := factStarting(t, res.Drafts, "Protokoll Jour fixe")
	if budget.Confidence >= 0.85 || budget.Confidence < 0.40 || len(tom.Entities) != 2 || tom.EntityType != "organisation" {
		t.Fatalf("drafts: %+v %+v", budget, tom)
	}

	// The same note again writes nothing: the same ids, unchanged.
	again := c.capture(map[string]any{"text": meetingNote, "source": "jour-fixe"})
	if len(again.Stored) != 2 || len(again.Drafts) != 3 || !again.Drafts[0].Unchanged || !again.Stored[0].Unchanged ||
		factStarting(t, again.Drafts, "Tom Schmidt").ID != tom.ID || factStarting(t, again.Stored, "Lisa Müller").ID != lisa.ID {
		t.Fatalf("capturing again: %+v", again)
	}

	// Entities: the stored facts count, drafts do not.
	ents := c.entities("")
	byKey := map[string]knowmind.Entity{}
	for _, e := range ents {
		byKey[e.Type+"/"+e.ID] = e
	}
	if e := byKey["person/lisa-mueller"]; e.Name != "Lisa Müller" || e.Facts != 1 {
		t.Fatalf("entity lisa-mueller: %+v (all %+v)", e, ents)
	}
	if e, ok := byKey["person/tom-schmidt"]; !ok || e.Facts != 0 {
		t.Fatalf("Tom Schmidt is named only by a draft: %+v", e)
	}
	if orgs := c.entities("organisation"); len(orgs) != 1 || orgs[0].ID != "acme-gmbh" || orgs[0].Facts != 1 {
		t.Fatalf("organisations: %+v", orgs)
	}
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_list_entities", map[string]any{"type": "planet"}), -32602, "type")

	// Drafts are listed, never recalled.
	if open := c.drafts(""); len(open) != 3 || open[0].Status != knowmind.DraftOpen || open[0].Extractor != "rules" {
		t.Fatalf("open drafts: %+v", open)
	}
	if ids := c.recall("knowmind_recall", map[string]any{"query": "Budget 50.000 Euro erhöhen", "hops": 0}); slices.Contains(ids, budget.ID) {
		t.Fatalf("a draft was recalled: %v", ids)
	}

	// Recall hits carry their entities.
	c.recall("knowmind_recall", map[string]any{"query": "Lisa Müller Projektleitung Relaunch", "hops": 0})
	if h := c.lastRecalled.Hits; len(h) == 0 || h[0].MemoryID != lisa.ID || h[0].EntityType != "person" || h[0].EntityID != "lisa-mueller" ||
		len(h[0].Entities) != 1 {
		t.Fatalf("recall of Lisa's fact: %+v", h)
	}

	var recent ListRecentResult
	structured(t, callTool(t, c.url, c.read, "knowmind_list_recent", map[string]any{}), &recent)
	if len(recent.Items) != 2 || !slices.ContainsFunc(recent.Items, func(it knowmind.RecentItem) bool {
		return it.ID == acme.ID && it.EntityID == "acme-gmbh" && len(it.Entities) == 1
	}) {
		t.Fatalf("list_recent items carry entities: %+v", recent.Items)
	}

	// Accept: the draft becomes a recallable memory with provenance.
	acc := c.review(budget.ID, "accept", "")
	if acc.Status != knowmind.DraftAccepted || acc.MemoryID == "" {
		t.Fatalf("accept: %+v", acc)
	}
	if ids := c.recall("knowmind_recall", map[string]any{"query": "Budget 50.000 Euro erhöhen", "hops": 0}); len(ids) == 0 || ids[0] != acc.MemoryID {
		t.Fatalf("the accepted draft's memory %s is not recalled first: %v", acc.MemoryID, ids)
	}
	// Edit then accept: the corrected text is stored, with the draft's entities.
	ed := c.review(tom.ID, "edit", "Tom Schmidt ist seit März Ansprechpartner bei der Acme GmbH.")
	if ed.Status != knowmind.DraftAccepted || ed.MemoryID == "" {
		t.Fatalf("edit: %+v", ed)
	}
	if e := c.entities("person"); !slices.ContainsFunc(e, func(e knowmind.Entity) bool { return e.ID == "tom-schmidt" && e.Facts == 1 }) {
		t.Fatalf("the edited fact must name Tom Schmidt: %+v", e)
	}
	rej := c.review(protocol.ID, "reject", "")
	if rej.Status != knowmind.DraftRejected || rej.MemoryID != "" {
		t.Fatalf("reject: %+v", rej)
	}
	// A draft is reviewed once.
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_review_draft", map[string]any{"draft_id": budget.ID, "action": "reject"}), 409, "")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_review_draft", map[string]any{"draft_id": "nope", "action": "accept"}), 404, "")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_review_draft", map[string]any{"draft_id": tom.ID, "action": "maybe"}), -32602, "action")
	if open := c.drafts(""); len(open) != 0 {
		t.Fatalf("no draft should be open: %+v", open)
	}
	if done := c.drafts("accepted"); len(done) != 2 || done[0].ReviewedBy == "" || done[0].MemoryID == "" || done[0].ReviewedAt == nil {
		t.Fatalf("accepted drafts carry provenance: %+v", done)
	}
	// Reads need no write scope, captures do.
	wantRPCError(t, callTool(t, c.url, c.read, "knowmind_capture", map[string]any{"text": "x"}), -32002, "")
}

func TestCaptureParams(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	for name, tc := range map[string]struct {
		args  map[string]any
		param string
	}{
		"no text":       {map[string]any{}, "text"},
		"blank text":    {map[string]any{"text": "  "}, "text"},
		"bad time":      {map[string]any{"text": "Lisa Müller kommt.", "occurred_at": "yesterday"}, "occurred_at"},
		"bad category":  {map[string]any{"text": "Lisa Müller kommt.", "category": "gossip"}, "category"},
		"bad extractor": {map[string]any{"text": "Lisa Müller kommt.", "extractor": "llm"}, "extractor"},
		"unknown":       {map[string]any{"text": "x", "content": "x"}, "content"},
	} {
		t.Run(name, func(t *testing.T) {
			wantRPCError(t, callTool(t, c.url, c.write, "knowmind_capture", tc.args), -32602, tc.param)
		})
	}
	// Nothing worth keeping: an empty answer, not an error.
	if res := c.capture(map[string]any{"text": "Hallo! Wie geht's? Ok."}); len(res.Stored)+len(res.Drafts) != 0 {
		t.Fatalf("small talk captured: %+v", res)
	}
}

// TestCaptureConflict: a fact contradicting a current memory about the same
// entity is reported with the old one's id and linked CONTRADICTS; the old
// memory stays current.
func TestCaptureConflict(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	first := c.capture(map[string]any{"text": "Die Acme GmbH liefert die Server bis zum 15. Mai."})
	if len(first.Stored) != 1 || len(first.Conflicts) != 0 {
		t.Fatalf("first capture: %+v", first)
	}
	old := first.Stored[0].ID
	again := c.capture(map[string]any{"text": "Die Acme GmbH liefert die Server bis zum 15. Mai."})
	if len(again.Stored) != 1 || !again.Stored[0].Unchanged || again.Stored[0].ID != old || len(again.Conflicts) != 0 {
		t.Fatalf("the same fact again must be reported unchanged: %+v", again)
	}
	second := c.capture(map[string]any{"text": "Update: Die Acme GmbH liefert die Server bis zum 30. Juni."})
	if len(second.Stored) != 1 || len(second.Conflicts) != 1 {
		t.Fatalf("second capture: %+v", second)
	}
	cf := second.Conflicts[0]
	if cf.ExistingID != old || cf.NewID != second.Stored[0].ID || cf.NewStatus != "stored" || !strings.Contains(cf.Reason, "different date") {
		t.Fatalf("conflict: %+v", cf)
	}
	var rel knowmind.RelationsResult
	structured(t, callTool(t, c.url, c.read, "knowmind_list_relations", map[string]any{"memory_id": cf.NewID}), &rel)
	if len(rel.Outgoing) != 1 || rel.Outgoing[0].RelType != "CONTRADICTS" || rel.Outgoing[0].To != old {
		t.Fatalf("relations of the new fact: %+v", rel)
	}
	if e := c.entities("organisation"); len(e) != 1 || e[0].Facts != 2 {
		t.Fatalf("both facts stay current: %+v", e)
	}
}

// fakeLLM is an OpenAI-compatible chat completions server whose "model"
// reads the user's text line by line: "0.82 | Lisa Müller leads Apollo." is a
// fact with that confidence naming the capitalised two-word name as a person;
// a line "INVALID" makes the whole answer unusable prose.
func fakeLLM(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if r.URL.Path != "/v1/chat/completions" || json.NewDecoder(r.Body).Decode(&req) != nil || len(req.Messages) != 2 {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		type entity struct {
			Type string `json:"type"`
			Name string `json:"name"`
		}
		type fact struct {
			Text       string   `json:"text"`
			Confidence float64  `json:"confidence"`
			Entities   []entity `json:"entities"`
		}
		facts := []fact{}
		content := ""
		for _, line := range strings.Split(req.Messages[1].Content, "\n") {
			if line == "INVALID" {
				content = "Sure! Here are your facts."
			}
			conf, text, ok := strings.Cut(line, " | ")
			c, err := strconv.ParseFloat(conf, 64)
			if !ok || err != nil {
				continue
			}
			f := fact{Text: text, Confidence: c, Entities: []entity{}}
			if w := strings.Fields(text); len(w) >= 2 {
				typ := "person"
				if strings.Contains(text, "PLANET") {
					typ = "planet"
				}
				f.Entities = append(f.Entities, entity{Type: typ, Name: w[0] + " " + w[1]})
			}
			facts = append(facts, f)
		}
		if content == "" {
			b, _ := json.Marshal(map[string]any{"facts": facts})
			content = string(b)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func newLLM(t *testing.T, url string) *extract.LLM {
	l, err := extract.NewLLM(extract.LLMConfig{URL: url, Model: "fake", Timeout: 5 * time.Second, Retries: 1, Backoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestCaptureLLM: the llm extractor against a fake server routes by the
// model's confidences, keeps invalid facts as drafts with the reason, and
// fails cleanly with -32000 when the server is down.
func TestCaptureLLM(t *testing.T) {
	down := httptest.NewServer(http.NotFoundHandler())
	downURL := down.URL
	down.Close()
	c := newEngineClient(t, Extractors{Default: "llm", ByName: map[string]knowmind.Extractor{
		"llm": newLLM(t, fakeLLM(t).URL), "llm-down": newLLM(t, downURL)}})
	res := c.capture(map[string]any{"text": "0.93 | Lisa Müller leads Apollo.\n0.60 | Tom Schmidt joins in May.\n" +
		"0.20 | Anna Weber likes tea.\n0.90 | Mars Rover is a PLANET."})
	if res.Extractor != "llm" || len(res.Stored) != 1 || len(res.Drafts) != 2 || res.Dropped != 1 {
		t.Fatalf("llm capture: %+v", res)
	}
	if s := res.Stored[0]; s.Text != "Lisa Müller leads Apollo." || s.EntityID != "lisa-mueller" || s.Span.Start != 7 {
		t.Fatalf("stored: %+v", s)
	}
	if d := factStarting(t, res.Drafts, "Mars Rover"); !strings.Contains(d.Reason, `entity type "planet" not declared`) {
		t.Fatalf("an undeclared entity type must make a draft with the reason: %+v", d)
	}
	inv := c.capture(map[string]any{"text": "INVALID\nLisa Müller übernimmt ab dem 1. April die Leitung."})
	if len(inv.Stored) != 0 || len(inv.Drafts) != 1 || !strings.HasPrefix(inv.Drafts[0].Reason, "llm output invalid") {
		t.Fatalf("invalid output must become drafts with the reason: %+v", inv)
	}
	// The rules extractor stays available by name.
	if r := c.capture(map[string]any{"text": "Die Beta AG zahlt ab dem 1. Mai 3.000 Euro.", "extractor": "rules"}); r.Extractor != "rules" || len(r.Stored) != 1 {
		t.Fatalf("rules by name: %+v", r)
	}
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_capture", map[string]any{"text": "0.9 | Lisa Müller leads Apollo.", "extractor": "llm-down"}), -32000, "")
}

// TestReviewCalibration drives 40 reviews: drafts of the 0.80 and 0.75
// buckets accepted (19 of 20 and 20 of 20) move the store threshold from
// 0.85 to 0.75, and the next capture of a 0.78 fact is stored, not drafted;
// three such direct stores superseded by update_fact move it back.
func TestReviewCalibration(t *testing.T) {
	c := newEngineClient(t, Extractors{Default: "llm", ByName: map[string]knowmind.Extractor{"llm": newLLM(t, fakeLLM(t).URL)}})
	var lines []string
	for i := range 20 {
		lines = append(lines, fmt.Sprintf("0.82 | Person%c Alpha owns task %d.", 'A'+i, i))
		lines = append(lines, fmt.Sprintf("0.77 | Person%c Beta owns ticket %d.", 'A'+i, i))
	}
	res := c.capture(map[string]any{"text": strings.Join(lines, "\n")})
	if len(res.Drafts) != 40 || len(res.Stored) != 0 {
		t.Fatalf("want 40 drafts, got %d stored %d", len(res.Drafts), len(res.Stored))
	}
	probe := func() knowmind.CaptureResult {
		return c.capture(map[string]any{"text": fmt.Sprintf("0.78 | Probe Person owns probe %d.", time.Now().UnixNano())})
	}
	if p := probe(); len(p.Drafts) != 1 {
		t.Fatalf("before the reviews a 0.78 fact is a draft: %+v", p)
	}
	var last knowmind.ReviewResult
	n82 := 0
	for _, d := range res.Drafts {
		if d.Confidence != 0.82 {
			continue
		}
		action := "accept"
		if n82 == 3 {
			action = "reject" // 19 of 20 accepted is still >= 90 %
		}
		n82++
		last = c.review(d.ID, action, "")
		if want := 0.85; n82 < 20 && last.Thresholds.Store != want {
			t.Fatalf("after %d reviews the threshold moved early: %+v", n82, last.Thresholds)
		}
	}
	if last.Thresholds.Store != 0.80 {
		t.Fatalf("after 20 reviews of the 0.80 bucket the store threshold is %v, want 0.80", last.Thresholds.Store)
	}
	for _, d := range res.Drafts {
		if d.Confidence == 0.77 {
			last = c.review(d.ID, "accept", "")
		}
	}
	if last.Thresholds != (knowmind.Thresholds{Store: 0.75, Draft: 0.40}) {
		t.Fatalf("after 40 reviews thresholds %+v, want store 0.75", last.Thresholds)
	}
	if p := probe(); len(p.Stored) != 1 || p.Thresholds.Store != 0.75 {
		t.Fatalf("after the reviews a 0.78 fact is stored: %+v", p)
	}
	var cal CaptureCalibrationResult
	structured(t, callTool(t, c.url, c.read, "knowmind_capture_calibration", map[string]any{}), &cal)
	if cal.Base.Store != 0.85 || cal.Thresholds.Store != 0.75 || len(cal.Buckets) != 2 {
		t.Fatalf("calibration: %+v", cal)
	}
	// Direct stores of the 0.75 bucket corrected by update_fact count against it: after
	// three (20 accepted of 23), the bucket goes back to drafts.
	for i := range 3 {
		p := probe()
		var upd knowmind.UpdateFactResult
		structured(t, callTool(t, c.url, c.write, "knowmind_update_fact", map[string]any{"target_id": p.Stored[0].ID,
			"new_title": "corrected", "new_content": fmt.Sprintf("Probe Person owns corrected probe %d.", i)}), &upd)
	}
	if p := probe(); len(p.Drafts) != 1 || p.Thresholds.Store != 0.80 {
		t.Fatalf("after three superseded direct stores a 0.78 fact is a draft again: %+v", p)
	}
	// The rules extractor has its own record: its threshold did not move.
	structured(t, callTool(t, c.url, c.read, "knowmind_capture_calibration", map[string]any{"extractor": "rules"}), &cal)
	if cal.Thresholds.Store != 0.85 {
		t.Fatalf("rules calibration: %+v", cal)
	}
}

func TestCaptureThresholdsPerTenant(t *testing.T) {
	srv := newTestServer(t, nil)
	url := srv.URL + "/api/mcp/v1"
	tenant := dgraphtest.TenantName(t)
	admin, write := newToken(t, tenant, knowmind.ScopeAdmin), newToken(t, tenant, knowmind.ScopeWrite)
	text := map[string]any{"text": "Lisa Müller übernimmt die Projektleitung."} // entity + decision: 0.80
	var res knowmind.CaptureResult
	structured(t, callTool(t, url, write, "knowmind_capture", text), &res)
	if len(res.Drafts) != 1 {
		t.Fatalf("under the defaults a draft: %+v", res)
	}
	wantRPCError(t, callTool(t, url, write, "knowmind_set_capture_thresholds", map[string]any{"store_threshold": 0.7, "draft_threshold": 0.3}), -32002, "")
	wantRPCError(t, callTool(t, url, admin, "knowmind_set_capture_thresholds", map[string]any{"store_threshold": 0.5, "draft_threshold": 0.6}), -32602, "draft_threshold")
	structured(t, callTool(t, url, admin, "knowmind_set_capture_thresholds", map[string]any{"store_threshold": 0.7, "draft_threshold": 0.3}), &SetCaptureThresholdsResult{})
	structured(t, callTool(t, url, write, "knowmind_capture", map[string]any{"text": "Tom Schmidt übernimmt die Projektleitung."}), &res)
	if len(res.Stored) != 1 || res.Thresholds.Store != 0.7 {
		t.Fatalf("with the tenant's threshold 0.7 stored: %+v", res)
	}
	// Another tenant keeps the defaults.
	other := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	structured(t, callTool(t, url, other, "knowmind_capture", map[string]any{"text": "Tom Schmidt übernimmt die Projektleitung."}), &res)
	if len(res.Drafts) != 1 || res.Thresholds.Store != 0.85 {
		t.Fatalf("another tenant: %+v", res)
	}
}

// TestEngineToolDescriptions: tools/list names the domain's entity types and
// categories from configuration.
func TestEngineToolDescriptions(t *testing.T) {
	srv := newTestServer(t, nil)
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	r := send(t, srv.URL+"/api/mcp/v1", token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, toolsetsHeader, "all")
	var res struct {
		Tools []struct{ Name, Description string }
	}
	if err := json.Unmarshal(r.Result, &res); err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, tl := range res.Tools {
		switch tl.Name {
		case "knowmind_capture", "knowmind_list_entities", "knowmind_retrieve":
			found++
			if !strings.Contains(tl.Description, "Entity types: person, organisation, project, place.") ||
				!strings.Contains(tl.Description, "Categories: decision, task,") {
				t.Errorf("%s description lacks the domain vocabulary: %s", tl.Name, tl.Description)
			}
		}
	}
	if found != 3 {
		t.Fatalf("engine tools missing from tools/list: %+v", res.Tools)
	}
}

// TestStoreMemoryEntities: knowmind_store_memory takes entities, reports
// contradictions with current memories about them, and capture then knows the
// entity by name.
func TestStoreMemoryEntities(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	store := func(content string, ents ...map[string]any) StoreMemoryResult {
		t.Helper()
		var res StoreMemoryResult
		structured(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"content": content, "entities": ents}), &res)
		return res
	}
	apollo := map[string]any{"type": "project", "name": "Apollo"}
	first := store("Das Budget für Apollo beträgt 50.000 Euro.", apollo)
	if len(first.Entities) != 1 || first.Entities[0] != (knowmind.EntityRef{Type: "project", ID: "apollo"}) || len(first.Conflicts) != 0 {
		t.Fatalf("first: %+v", first)
	}
	second := store("Das Budget für Apollo beträgt 60.000 Euro.", map[string]any{"type": "project", "id": "apollo"})
	if len(second.Conflicts) != 1 || second.Conflicts[0].ExistingID != first.ID || !strings.Contains(second.Conflicts[0].Reason, "different number") {
		t.Fatalf("second: %+v", second)
	}
	// A new version keeps the entities: Apollo still has two current facts.
	var upd knowmind.UpdateFactResult
	structured(t, callTool(t, c.url, c.write, "knowmind_update_fact", map[string]any{"target_id": second.ID,
		"new_title": "Budget", "new_content": "Das Budget für Apollo beträgt 65.000 Euro."}), &upd)
	if e := c.entities("project"); len(e) != 1 || e[0].Facts != 2 {
		t.Fatalf("after update_fact: %+v", e)
	}
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"content": "x y z",
		"entities": []any{map[string]any{"type": "planet", "name": "Mars"}}}), -32602, "entities")
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_store_memory", map[string]any{"content": "x y z",
		"entities": []any{map[string]any{"name": "Mars"}}}), -32602, "type")
	// Capture recognises the stored entity by name, which raises its confidence.
	res := c.capture(map[string]any{"text": "Der Kickoff von Apollo wurde auf den 10.01.2026 verschoben."})
	if len(res.Stored) != 1 || res.Stored[0].EntityID != "apollo" || res.Stored[0].EntityType != "project" {
		t.Fatalf("capture with a known entity: %+v", res)
	}
}

// TestEngineVocabularyRefresh: a changed vocabulary (a shape file edited) is
// read once per TTL, not per request: within the TTL tools/list and the tools
// keep the old one; past it they show and accept the new one.
func TestEngineVocabularyRefresh(t *testing.T) {
	var mu sync.Mutex
	types, loads := []string{"person", "client"}, 0
	server := func(ttl time.Duration) string {
		return newTestServer(t, func(d *Deps) {
			d.VocabularyTTL = ttl
			d.Vocabulary = func() ([]string, []string, error) {
				mu.Lock()
				defer mu.Unlock()
				loads++
				return slices.Clone(types), []string{"decision"}, nil
			}
		}).URL + "/api/mcp/v1"
	}
	token := newToken(t, dgraphtest.TenantName(t), knowmind.ScopeWrite)
	describe := func(url string) string {
		r := send(t, url, token, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, toolsetsHeader, "all")
		var res struct {
			Tools []struct{ Name, Description string }
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		for _, tl := range res.Tools {
			if tl.Name == "knowmind_capture" {
				return tl.Description
			}
		}
		t.Fatal("no knowmind_capture in tools/list")
		return ""
	}
	cached := server(time.Hour)
	if d := describe(cached); !strings.HasSuffix(d, " Entity types: person, client. Categories: decision.") {
		t.Fatalf("description: %s", d)
	}
	mu.Lock()
	types = append(types, "supplier")
	mu.Unlock()
	if d := describe(cached); strings.Contains(d, "supplier") {
		t.Fatalf("refreshed within the TTL: %s", d)
	}
	wantRPCError(t, callTool(t, cached, token, "knowmind_list_entities", map[string]any{"type": "supplier"}), -32602, "type")
	mu.Lock()
	if loads != 1 {
		t.Errorf("the vocabulary was read %d times within one TTL, want once", loads)
	}
	mu.Unlock()

	expired := server(time.Nanosecond) // every request is past the TTL
	if d := describe(expired); !strings.HasSuffix(d, " Entity types: person, client, supplier. Categories: decision.") {
		t.Fatalf("not refreshed after the TTL: %s", d)
	}
	structured(t, callTool(t, expired, token, "knowmind_list_entities", map[string]any{"type": "supplier"}), &ListEntitiesResult{})
}

// TestCaptureConcurrent: parallel captures naming the same person make one
// entity, and parallel reviews of one draft make one memory (the others 409).
func TestCaptureConcurrent(t *testing.T) {
	c := newEngineClient(t, Extractors{})
	const n = 6
	var wg sync.WaitGroup
	replies := make([]reply, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = callTool(t, c.url, c.write, "knowmind_capture", map[string]any{
				"text": fmt.Sprintf("Lisa Müller übernimmt am %d.05.2026 die Leitung von Team %d.", i+1, i)})
		}()
	}
	wg.Wait()
	for _, r := range replies {
		structured(t, r, &knowmind.CaptureResult{})
	}
	if p := c.entities("person"); len(p) != 1 || p[0].ID != "lisa-mueller" || p[0].Facts != n {
		t.Fatalf("want one entity lisa-mueller with %d facts: %+v", n, p)
	}

	res := c.capture(map[string]any{"text": "Tom Schmidt übernimmt das Budget."}) // entity + decision: a draft
	if len(res.Drafts) != 1 {
		t.Fatalf("want a draft: %+v", res)
	}
	id := res.Drafts[0].ID
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			replies[i] = callTool(t, c.url, c.write, "knowmind_review_draft", map[string]any{"draft_id": id, "action": "accept"})
		}()
	}
	wg.Wait()
	accepted := 0
	for _, r := range replies {
		switch {
		case r.Error == nil:
			accepted++
		case r.Error.Code != 409:
			t.Fatalf("a concurrent review failed otherwise: %+v", r.Error)
		}
	}
	if e := c.entities("person"); accepted != 1 || len(e) != 2 || e[1].ID != "tom-schmidt" || e[1].Facts != 1 {
		t.Fatalf("%d reviews accepted; entities %+v", accepted, e)
	}
}
