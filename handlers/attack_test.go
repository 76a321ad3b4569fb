package handlers

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// The full cross-tenant suite of issue 13 (`make attack`; the fast part is
// TestCrossTenantFast). Tenant A holds memories, a document, a relation,
// notes, a goal and captured facts and drafts. Tenant B — with a kmt_ token,
// with a JWT, with forged and malformed JWTs, with A's session id, and with
// its own Dgraph logins — calls every tool that takes an id with each of A's
// ids in several spellings (and A's Dgraph uids, and injection strings),
// recalls and searches A's unique words, and logs into A's namespace. No
// answer may carry anything of A that the request did not, and A must be
// unchanged afterwards.
func TestCrossTenantAttack(t *testing.T) {
	if os.Getenv("KNOWMIND_ATTACK") == "" {
		t.Skip("the full cross-tenant suite runs with `make attack` (KNOWMIND_ATTACK=1)")
	}
	start := time.Now()
	ctx := context.Background()
	env := dgraphtest.Shared(t)
	srv := newTestServer(t, nil)
	url := srv.URL + mcpPath
	tenantA, tenantB := dgraphtest.TenantName(t), dgraphtest.TenantName(t)
	tokA := newToken(t, tenantA, knowmind.ScopeRead, knowmind.ScopeWrite, knowmind.ScopeAdmin)
	tokB := newToken(t, tenantB, knowmind.ScopeRead, knowmind.ScopeWrite, knowmind.ScopeAdmin)
	claims := func(tenant string) jwt.MapClaims {
		return jwt.MapClaims{"tenant": tenant, "scope": "read write admin", "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()}
	}
	jwtB := hsJWT(t, claims(tenantB))

	// A's workspace, and every string of it an answer to B must not hold.
	const marker = "vorquinthal"
	var secrets, ids []string
	store := func(name string, args map[string]any, out any) {
		t.Helper()
		structured(t, callTool(t, url, tokA, name, args), out)
	}
	var memIDs []string
	for i := range 3 {
		title, content := fmt.Sprintf("Akte %s %d", marker, i), fmt.Sprintf("Vertraulich: %s Projekt %d von Mandant A.", marker, i)
		var res StoreMemoryResult
		store("knowmind_store_memory", map[string]any{"title": title, "content": content, "tags": []string{marker + "-tag"}}, &res)
		memIDs = append(memIDs, res.ID)
		secrets = append(secrets, title, content, marker+"-tag")
	}
	var doc UploadDocumentResult
	store("knowmind_upload_document", map[string]any{"title": "Leitfaden " + marker, "content": "# Kapitel\n\nDer " + marker + " Leitfaden.\n\n## Anhang\n\nNur für A."}, &doc)
	memIDs = append(memIDs, doc.ID)
	secrets = append(secrets, "Leitfaden "+marker, "Der "+marker+" Leitfaden.")
	store("knowmind_link", linkArgs(memIDs[0], memIDs[1], "REFERENCES"), &LinkResult{})
	var notes []knowmind.NoteWriteResult
	for i := range 2 {
		var n knowmind.NoteWriteResult
		store("knowmind_create_note", map[string]any{"project": "main", "path": "Geheim/" + marker,
			"body": fmt.Sprintf("# Notiz %s %d\n\nInhalt %s der Notiz %d.", marker, i, marker, i)}, &n)
		notes = append(notes, n)
		secrets = append(secrets, n.Title, fmt.Sprintf("Inhalt %s der Notiz %d.", marker, i), n.VersionToken)
	}
	var goal GoalResult
	store("knowmind_set_goal", map[string]any{"text": "Erinnere an " + marker + " Frist", "due_at": time.Now().Add(24 * time.Hour).UTC().Format(time.RFC3339)}, &goal)
	secrets = append(secrets, "Erinnere an "+marker+" Frist")
	var capt knowmind.CaptureResult
	store("knowmind_capture", map[string]any{"text": meetingNote, "source": "jour-fixe-" + marker}, &capt)
	var captured []string
	for _, f := range append(append([]knowmind.CapturedFact{}, capt.Stored...), capt.Drafts...) {
		captured = append(captured, f.ID)
	}
	ids = append(append(append(ids, memIDs...), notes[0].ID, notes[1].ID, goal.Goal.ID), captured...)
	secrets = append(append(secrets, ids...), "jour-fixe-"+marker)

	// A's Dgraph uids, as an attacker who saw one somewhere might send them.
	tenA, err := env.Client.Tenant(ctx, tenantA, false)
	if err != nil {
		t.Fatal(err)
	}
	var uids struct{ U []struct{ UID string } }
	resp, err := env.DG(t, tenA).NewReadOnlyTxn().Query(ctx, `{ u(func: has(Memory.id), first: 6) { uid } }`)
	if err != nil || json.Unmarshal(resp.Json, &uids) != nil {
		t.Fatal(err)
	}
	before := snapshotA(t, url, tokA, memIDs, notes)

	// The ids B sends: each of A's in several spellings, A's uids, injections.
	var attackIDs []string
	for _, id := range ids {
		attackIDs = append(attackIDs, id, strings.ToUpper(id), " "+id+" ", id+"\n", `"`+id+`"`)
	}
	for _, u := range uids.U {
		attackIDs = append(attackIDs, u.UID)
	}
	attackIDs = append(attackIDs, "[["+notes[0].Title+"]]", "*", "0x1", `") { uid } #`, `" or has(Memory.id) or "`, "uid(0x1)", `$id`, "../"+tenantA)

	attempts, leaks := 0, 0
	outcomes := map[string]int{}
	check := func(tok, name string, args map[string]any, headers ...string) {
		t.Helper()
		attempts++
		a, _ := json.Marshal(args)
		r := send(t, url, tok, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, name, a), headers...)
		switch {
		case r.Error != nil:
			outcomes[fmt.Sprint(r.Error.Code)]++
		case r.Status != http.StatusOK:
			outcomes[fmt.Sprintf("HTTP %d", r.Status)]++
		default:
			outcomes["answered"]++
		}
		for _, s := range secrets {
			if strings.Contains(string(r.Body), s) && !strings.Contains(string(a), s) {
				leaks++
				t.Errorf("%s %s answered with A's %q: %.300s", name, a, s, r.Body)
				return
			}
		}
	}

	// B's own memory and note, for links that start on B's side.
	var mineB StoreMemoryResult
	structured(t, callTool(t, url, tokB, "knowmind_store_memory", map[string]any{"content": "B's own memory about quarterly figures."}), &mineB)
	var noteB knowmind.NoteWriteResult
	structured(t, callTool(t, url, tokB, "knowmind_create_note", map[string]any{"project": "main", "body": "# Notiz von B\n\nNur B."}), &noteB)

	asOf := time.Now().UTC().Format(time.RFC3339)
	for _, tok := range []string{tokB, jwtB} {
		for _, id := range attackIDs {
			vt := notes[0].VersionToken
			check(tok, "knowmind_list_relations", map[string]any{"memory_id": id})
			check(tok, "knowmind_explore", map[string]any{"memory_id": id, "hops": 3})
			check(tok, "knowmind_update_fact", map[string]any{"target_id": id, "new_title": "x", "new_content": "überschrieben von B"})
			check(tok, "knowmind_link", linkArgs(mineB.ID, id, "RELATES_TO"))
			check(tok, "knowmind_link", linkArgs(id, mineB.ID, "RELATES_TO"))
			check(tok, "knowmind_unlink", linkArgs(id, memIDs[1], "REFERENCES"))
			check(tok, "knowmind_get_note", map[string]any{"id": id, "detailed": true})
			check(tok, "knowmind_edit_note", map[string]any{"id": id, "versionToken": vt, "op": "append", "content": "B war hier"})
			check(tok, "knowmind_rename_note", map[string]any{"id": id, "versionToken": vt, "title": "Übernommen"})
			check(tok, "knowmind_move_note", map[string]any{"id": id, "versionToken": vt, "path": "B"})
			check(tok, "knowmind_delete_note", map[string]any{"id": id, "versionToken": vt})
			check(tok, "knowmind_link_note", map[string]any{"from": noteB.ID, "to": id})
			check(tok, "knowmind_link_note", map[string]any{"from": id, "to": noteB.ID})
			check(tok, "knowmind_close_goal", map[string]any{"goal_id": id, "status": "done"})
			check(tok, "knowmind_review_draft", map[string]any{"draft_id": id, "action": "accept"})
		}
		for _, q := range []string{marker, "Vertraulich Mandant", "Leitfaden " + marker, "Notiz " + marker, "Lisa Müller Präsentation", marker + "-tag"} {
			check(tok, "knowmind_recall", map[string]any{"query": q, "k": 25, "hops": 3})
			check(tok, "knowmind_recall_at_time", map[string]any{"query": q, "k": 25, "as_of": asOf})
			check(tok, "knowmind_search", map[string]any{"query": q, "limit": 25})
			check(tok, "knowmind_context", map[string]any{"query": q})
			check(tok, "knowmind_link_note", map[string]any{"from": noteB.ID, "toTitle": q})
		}
		for _, name := range []string{"knowmind_list_recent", "knowmind_stats", "knowmind_briefing", "knowmind_list_goals", "knowmind_list_drafts",
			"knowmind_list_entities", "knowmind_whoami", "knowmind_start_session", "knowmind_list_projects", "knowmind_recent_activity"} {
			check(tok, name, map[string]any{})
		}
		check(tok, "knowmind_list_notes", map[string]any{"project": "main", "path": "Geheim/" + marker})
		check(tok, "knowmind_move_folder", map[string]any{"project": "main", "from": "Geheim/" + marker, "to": "B"})
	}

	// Forged and malformed JWTs naming A: none may act as A.
	forged := map[string]string{
		"wrong secret": signJWT(t, jwt.SigningMethodHS256, []byte("another-secret-that-is-long-enough!!"), claims(tenantA)),
		"alg none":     signJWT(t, jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, claims(tenantA)),
		"expired":      hsJWT(t, jwt.MapClaims{"tenant": tenantA, "scope": "read", "aud": testJWTAudience, "exp": time.Now().Add(-time.Hour).Unix()}),
		"wrong aud":    hsJWT(t, jwt.MapClaims{"tenant": tenantA, "scope": "read", "aud": "elsewhere", "exp": time.Now().Add(time.Hour).Unix()}),
		"no exp":       hsJWT(t, jwt.MapClaims{"tenant": tenantA, "scope": "read", "aud": testJWTAudience}),
		"B's tampered": tamperJWT(jwtB, tenantB, tenantA),
		"tenant list":  hsJWT(t, jwt.MapClaims{"tenant": []string{tenantB, tenantA}, "scope": "read", "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()}),
		"tenant obj":   hsJWT(t, jwt.MapClaims{"tenant": map[string]string{"name": tenantA}, "scope": "read", "aud": testJWTAudience, "exp": time.Now().Add(time.Hour).Unix()}),
	}
	jwtRefused := 0
	for name, tok := range forged {
		for _, tool := range []string{"knowmind_stats", "knowmind_list_recent"} {
			check(tok, tool, map[string]any{})
			check(tok, "knowmind_recall", map[string]any{"query": marker})
			check(tok, "knowmind_get_note", map[string]any{"id": notes[0].ID})
		}
		if r := callTool(t, url, tok, "knowmind_stats", map[string]any{}); r.Status == http.StatusOK && r.Error == nil {
			t.Errorf("forged JWT %q was accepted: %s", name, r.Body)
		} else {
			jwtRefused++
		}
	}

	// A's session id with B's token, and headers naming A.
	sidA := openSession(t, url, tokA)
	for _, tok := range []string{tokB, jwtB} {
		for _, h := range [][]string{
			{"Mcp-Session-Id", sidA, "MCP-Protocol-Version", "2025-06-18"},
			{"X-Tenant", tenantA}, {"X-Forwarded-User", tenantA}, {"X-Knowmind-Tenant", tenantA},
		} {
			check(tok, "knowmind_recall", map[string]any{"query": marker}, h...)
			check(tok, "knowmind_list_recent", map[string]any{}, h...)
			check(tok, "knowmind_get_note", map[string]any{"id": notes[0].ID}, h...)
		}
	}

	// B's Dgraph logins (the analyst's and the namespace guardian's) against A's namespace and the service's.
	dgLogins, dgRefused := 0, 0
	analyst, err := env.Client.AnalystLogin(ctx, tenantB)
	if err != nil {
		t.Fatal(err)
	}
	guardian, err := env.Client.NamespaceCredentials(ctx, tenantB)
	if err != nil {
		t.Fatal(err)
	}
	for _, cred := range []struct{ user, password string }{{analyst.User, analyst.Password}, {guardian.User, guardian.Password}} {
		for _, ns := range []uint64{tenA.Namespace, 0} {
			dgLogins++
			attempts++
			dg := dgraphtest.Dial(t, env.Alphas[0])
			if err := dg.LoginIntoNamespace(ctx, cred.user, cred.password, ns); err == nil {
				leaks++
				t.Errorf("tenant B's %s logs into namespace %d", cred.user, ns)
			} else {
				dgRefused++
			}
		}
		// In B's own namespace, A's words are nowhere.
		dgLogins++
		attempts++
		dg := dgraphtest.Dial(t, env.Alphas[0])
		if err := dg.LoginIntoNamespace(ctx, cred.user, cred.password, analyst.Namespace); err != nil {
			t.Fatalf("B's own login: %v", err)
		}
		resp, err := dg.NewReadOnlyTxn().Query(ctx, `{ q(func: has(Memory.id)) { Memory.id Memory.title Memory.content } }`)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets {
			if strings.Contains(string(resp.Json), s) {
				leaks++
				t.Errorf("B's %s sees A's %q in its namespace", cred.user, s)
			}
		}
	}

	if after := snapshotA(t, url, tokA, memIDs, notes); after != before {
		t.Errorf("A changed under B's attempts:\nbefore %s\nafter  %s", before, after)
	}
	keys := make([]string, 0, len(outcomes))
	for k := range outcomes {
		keys = append(keys, fmt.Sprintf("%s %d", k, outcomes[k]))
	}
	sort.Strings(keys)
	t.Logf("cross-tenant attack: %d attempts in %.0fs (%d tool calls with %d ids in their spellings, %d forged JWTs refused of %d, %d Dgraph logins, %d refused); "+
		"answers: %s; %d leaks; A unchanged: %v",
		attempts, time.Since(start).Seconds(), attempts-dgLogins, len(attackIDs), jwtRefused, len(forged), dgLogins, dgRefused,
		strings.Join(keys, ", "), leaks, !t.Failed())
	if attempts < 1000 {
		t.Errorf("only %d attempts, want at least 1,000", attempts)
	}
}

// snapshotA is what B must not change of A: its memories' state, its
// relation, its notes' versions, its open goal and drafts, its counts.
func snapshotA(t *testing.T, url, tok string, memIDs []string, notes []knowmind.NoteWriteResult) string {
	t.Helper()
	var parts []string
	for _, id := range memIDs {
		var rel map[string]any
		structured(t, callTool(t, url, tok, "knowmind_list_relations", map[string]any{"memory_id": id}), &rel)
		parts = append(parts, fmt.Sprint(rel))
	}
	for _, n := range notes {
		var got GetNoteResult
		structured(t, callTool(t, url, tok, "knowmind_get_note", map[string]any{"id": n.ID}), &got)
		g, _ := json.Marshal(got)
		parts = append(parts, string(g))
	}
	for _, name := range []string{"knowmind_stats", "knowmind_list_goals", "knowmind_list_drafts"} {
		var out map[string]any
		structured(t, callTool(t, url, tok, name, map[string]any{}), &out)
		delete(out, "uptime_s")
		o, _ := json.Marshal(out)
		parts = append(parts, string(o))
	}
	return strings.Join(parts, "\n")
}

func signJWT(t *testing.T, m jwt.SigningMethod, key any, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(m, c).SignedString(key)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// tamperJWT swaps the tenant in a signed token's payload, keeping its signature.
func tamperJWT(token, from, to string) string {
	parts := strings.Split(token, ".")
	payload, _ := jwt.NewParser().DecodeSegment(parts[1])
	parts[1] = base64.RawURLEncoding.EncodeToString([]byte(strings.Replace(string(payload), from, to, 1)))
	return strings.Join(parts, ".")
}
