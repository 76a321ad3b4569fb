package handlers

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
)

// fakeWorkspaces opens one fakeWorkspace and records who asked for it.
type fakeWorkspaces struct {
	ws      *fakeWorkspace
	opened  []string
	created []bool
}

func (f *fakeWorkspaces) Workspace(_ context.Context, tenant string, create bool) (knowmind.Workspace, error) {
	f.opened = append(f.opened, tenant)
	f.created = append(f.created, create)
	return f.ws, nil
}

func (f *fakeWorkspaces) Capabilities() knowmind.Capabilities { return knowmind.Capabilities{} }

// fakeWorkspace answers stats and recall from fixed data and records what recall was asked.
// The embedded interface is nil: a tool calling anything else panics, which the test would
// see as an internal error.
type fakeWorkspace struct {
	knowmind.Workspace
	recalled []knowmind.RecallQuery
	scopes   []knowmind.NoteScope
}

func (f *fakeWorkspace) Stats(context.Context) (knowmind.Stats, error) {
	return knowmind.Stats{Memories: 7, Edges: 3, Chunks: 11}, nil
}

func (f *fakeWorkspace) RecallVisible(_ context.Context, scope knowmind.NoteScope, q knowmind.RecallQuery) (knowmind.RecallResult, error) {
	f.recalled = append(f.recalled, q)
	f.scopes = append(f.scopes, scope)
	return knowmind.RecallResult{Hits: []knowmind.RecallHit{{MemoryID: "m1", Kind: "memory", Title: "Apollo", Content: "Apollo startet im Mai", Score: 0.9}}}, nil
}

func (f *fakeWorkspace) AttachEntities(_ context.Context, hits []knowmind.RecallHit) error {
	for i := range hits {
		hits[i].Entities = []knowmind.EntityRef{{Type: "project", ID: "apollo"}}
	}
	return nil
}

// TestToolsRunOnAFakeWorkspace: the tools hold the root package's service interfaces, so a
// transport test needs no Dgraph. Over stdio, knowmind_stats and knowmind_recall answer from a
// fake; the workspace opened is the local caller's tenant, and recall reaches the service
// with the tool's defaults resolved and the caller's scope.
func TestToolsRunOnAFakeWorkspace(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ws := &fakeWorkspaces{ws: &fakeWorkspace{}}
	caller := LocalCaller{Principal: knowmind.Principal{Tenant: "acme", Scopes: []knowmind.Scope{knowmind.ScopeRead},
		Projects: []string{"apollo"}, TokenID: "local"}}
	serverT, clientT := mcp.NewInMemoryTransports()
	served := make(chan error, 1)
	go func() { served <- ServeStdio(ctx, Deps{Workspaces: ws}, caller, serverT) }()

	client := mcp.NewClient(&mcp.Implementation{Name: "fake-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	call := func(name string, args map[string]any, into any) {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if res.IsError {
			t.Fatalf("%s: error result %+v", name, res.Content)
		}
		raw, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(raw, into); err != nil {
			t.Fatalf("%s: %v in %s", name, err, raw)
		}
	}

	var stats StatsResult
	call("knowmind_stats", map[string]any{}, &stats)
	if stats != (knowmind.Stats{Memories: 7, Edges: 3, Chunks: 11}) {
		t.Errorf("stats = %+v, want the fake's counts", stats)
	}
	var recall RecallResult
	call("knowmind_recall", map[string]any{"query": "Wann startet Apollo?"}, &recall)
	if len(recall.Hits) != 1 || recall.Hits[0].MemoryID != "m1" || len(recall.Hits[0].Entities) != 1 {
		t.Errorf("recall hits = %+v, want the fake's hit with its entity", recall.Hits)
	}

	if len(ws.opened) != 2 || ws.opened[0] != "acme" || ws.opened[1] != "acme" || ws.created[0] {
		t.Errorf("workspaces opened %v (create %v), want the caller's tenant acme twice, not created", ws.opened, ws.created)
	}
	f := ws.ws
	if len(f.recalled) != 1 {
		t.Fatalf("recall reached the service %d times, want 1", len(f.recalled))
	}
	want := knowmind.RecallQuery{Query: "Wann startet Apollo?", K: knowmind.RecallDefaultK, Hops: knowmind.RecallDefaultHops,
		MinScore: knowmind.RecallMinScore}
	if got := f.recalled[0]; got.Query != want.Query || got.K != want.K || got.Hops != want.Hops || got.MinScore != want.MinScore || got.AsOf != nil {
		t.Errorf("recall asked %+v, want %+v", got, want)
	}
	if sc := f.scopes[0]; len(sc.Projects) != 1 || sc.Projects[0] != "apollo" {
		t.Errorf("recall's scope = %+v, want the caller's project apollo", sc)
	}

	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := <-served; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
}

// storingWorkspace records what store_memory asked of the service.
type storingWorkspace struct {
	knowmind.Workspace
	mu     sync.Mutex
	stored []knowmind.StoreMemoryInput
}

// storingWorkspaces opens its one storingWorkspace for every tenant.
type storingWorkspaces struct{ ws *storingWorkspace }

func (f storingWorkspaces) Workspace(context.Context, string, bool) (knowmind.Workspace, error) {
	return f.ws, nil
}

func (f storingWorkspaces) Capabilities() knowmind.Capabilities { return knowmind.Capabilities{} }

func (f *storingWorkspace) StoreMemory(_ context.Context, in knowmind.StoreMemoryInput) (knowmind.StoreResult, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stored = append(f.stored, in)
	return knowmind.StoreResult{MemoryID: "m" + strconv.Itoa(len(f.stored))}, nil
}

// TestStdioProcessIsOneSession: each stdio server is one MCP session, so two desktop clients
// of one local user (two processes on one data dir) store with the same writer and two
// sessions, and one client's calls all with its own: their implicit sequences stay apart.
func TestStdioProcessIsOneSession(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	ws := &storingWorkspace{}
	caller := LocalCaller{Principal: knowmind.Principal{Tenant: "acme", Scopes: []knowmind.Scope{knowmind.ScopeWrite}, TokenID: "local"}}
	var served sync.WaitGroup
	var clients []*mcp.ClientSession
	for range 2 {
		serverT, clientT := mcp.NewInMemoryTransports()
		served.Go(func() { _ = ServeStdio(ctx, Deps{Workspaces: storingWorkspaces{ws}}, caller, serverT) })
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-session-test", Version: "1"}, nil).Connect(ctx, clientT, nil)
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		clients = append(clients, cs)
	}
	for _, c := range []int{0, 1, 0} {
		res, err := clients[c].CallTool(ctx, &mcp.CallToolParams{Name: "knowmind_store_memory", Arguments: map[string]any{"content": "turn of client " + strconv.Itoa(c)}})
		if err != nil || res.IsError {
			t.Fatalf("store_memory: %v %+v", err, res)
		}
	}
	for _, cs := range clients {
		_ = cs.Close()
	}
	cancel()
	served.Wait()
	if len(ws.stored) != 3 {
		t.Fatalf("stored %d, want 3", len(ws.stored))
	}
	a, b, a2 := ws.stored[0], ws.stored[1], ws.stored[2]
	if a.Writer != "local" || b.Writer != "local" || a.Session == "" || b.Session == "" || a.Session == b.Session || a2.Session != a.Session {
		t.Errorf("writers %q %q %q, sessions %q %q %q: want one writer, the first client's calls in one session, the second's in another",
			a.Writer, b.Writer, a2.Writer, a.Session, b.Session, a2.Session)
	}
}
