package handlers

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestNotesRenameProject: knowmind_rename_project changes handle and name; the old handle keeps
// resolving (for tools and for a token limited to it), notes, ids, links and the session's visit
// stay; taken handles are 409 and parameters are checked.
func TestNotesRenameProject(t *testing.T) {
	c := newNotesClient(t)
	ctx := context.Background()
	ten := tenantOf(t, c.tenant)
	if _, err := ten.CreateProject(ctx, "kunden", "Kunden"); err != nil {
		t.Fatal(err)
	}
	limited, _, err := dgraphtest.Shared(t).Client.CreateLimitedToken(ctx, c.tenant, []knowmind.Scope{knowmind.ScopeWrite},
		[]string{"kunden"}, nil, "kunden-agent", nil)
	if err != nil {
		t.Fatal(err)
	}
	akte := c.create(map[string]any{"project": "kunden", "path": "Müller", "body": "# Akte Müller\n\nGilt: [[Rahmenvertrag]]."})
	vertrag := c.create(map[string]any{"project": "kunden", "body": "# Rahmenvertrag\n\nBis 2027."})
	if s := c.session(limited, map[string]any{"project": "kunden"}); !s.Delta.FirstVisit {
		t.Fatalf("first session: %+v", s.Delta)
	}
	rename := func(token string, args map[string]any) RenameProjectResult {
		t.Helper()
		var res RenameProjectResult
		structured(t, callTool(t, c.url, token, "knowmind_rename_project", args), &res)
		return res
	}

	// Refusals first: nothing changes.
	for name, tc := range map[string]struct {
		token string
		args  map[string]any
		code  int64
		param string
	}{
		"nothing to change":    {c.write, map[string]any{"project": "kunden"}, jsonrpc.CodeInvalidParams, "handle"},
		"invalid handle":       {c.write, map[string]any{"project": "kunden", "handle": "Kunden 2027"}, jsonrpc.CodeInvalidParams, "handle"},
		"handle too long":      {c.write, map[string]any{"project": "kunden", "handle": strings.Repeat("k", knowmind.MaxProjectHandle+1)}, jsonrpc.CodeInvalidParams, "handle"},
		"name too long":        {c.write, map[string]any{"project": "kunden", "name": strings.Repeat("N", knowmind.MaxProjectNameChars+1)}, jsonrpc.CodeInvalidParams, "name"},
		"name with a newline":  {c.write, map[string]any{"project": "kunden", "name": "a\nb"}, jsonrpc.CodeInvalidParams, "name"},
		"missing project":      {c.write, map[string]any{"handle": "x"}, jsonrpc.CodeInvalidParams, "project"},
		"unknown project":      {c.write, map[string]any{"project": "nirgends", "handle": "x"}, codeNotFound, ""},
		"handle of another":    {c.write, map[string]any{"project": "kunden", "handle": "main"}, codeConflict, ""},
		"read token":           {c.read, map[string]any{"project": "kunden", "handle": "x"}, codeScope, ""},
		"outside the token":    {limited, map[string]any{"project": "main", "handle": "x"}, codeScope, ""},
		"unknown, outside too": {limited, map[string]any{"project": "nirgends", "handle": "x"}, codeScope, ""},
	} {
		t.Run(name, func(t *testing.T) {
			wantRPCError(t, callTool(t, c.url, tc.token, "knowmind_rename_project", tc.args), tc.code, tc.param)
		})
	}

	res := rename(c.write, map[string]any{"project": "kunden", "handle": "kunden-2027", "name": "Kunden 2027"})
	if res.Handle != "kunden-2027" || res.Name != "Kunden 2027" || !slices.Equal(res.Aliases, []string{"kunden"}) || res.Notes != 2 {
		t.Fatalf("rename = %+v", res)
	}
	// The old handle still resolves, for every tool and for the token limited to it; results
	// name the new handle.
	var listing ListNotesResult
	structured(t, callTool(t, c.url, limited, "knowmind_list_notes", map[string]any{"project": "kunden"}), &listing)
	if listing.Project != "kunden-2027" || len(listing.Notes) != 1 || listing.Notes[0].ID != vertrag.ID {
		t.Fatalf("list_notes by the old handle: %+v", listing)
	}
	structured(t, callTool(t, c.url, limited, "knowmind_list_notes", map[string]any{"project": "kunden-2027", "path": "Müller"}), &listing)
	if len(listing.Notes) != 1 || listing.Notes[0].ID != akte.ID {
		t.Fatalf("list_notes by the new handle with the old-handle token: %+v", listing)
	}
	var created knowmind.NoteWriteResult
	structured(t, callTool(t, c.url, limited, "knowmind_create_note", map[string]any{"project": "kunden", "body": "# Neukunde\n\nSiehe [[Akte Müller]]."}), &created)
	if created.Project != "kunden-2027" || !slices.Equal(created.Links, []string{"Akte Müller"}) {
		t.Fatalf("create by the old handle: %+v", created)
	}
	var got GetNoteResult
	structured(t, callTool(t, c.url, limited, "knowmind_get_note", map[string]any{"id": "[[Rahmenvertrag]]", "project": "kunden", "detailed": true}), &got)
	if got.ID != vertrag.ID || got.Project != "kunden-2027" || len(got.Links.In) != 1 || got.Links.In[0].ID != akte.ID {
		t.Fatalf("get by wiki ref in the old handle: %+v", got)
	}
	if ids := c.search(limited, map[string]any{"query": "Rahmenvertrag", "project": "kunden"}); !slices.Contains(ids, vertrag.ID) {
		t.Fatalf("search in the old handle: %v", ids)
	}
	var projects ListProjectsResult
	structured(t, callTool(t, c.url, limited, "knowmind_list_projects", map[string]any{}), &projects)
	if len(projects.Projects) != 1 || projects.Projects[0].Handle != "kunden-2027" || !slices.Equal(projects.Projects[0].Aliases, []string{"kunden"}) {
		t.Fatalf("list_projects of the old-handle token: %+v", projects)
	}
	// The session's visit belongs to the project, not to the handle.
	if s := c.session(limited, map[string]any{"project": "kunden-2027"}); s.Delta.FirstVisit || s.Index.Project != "kunden-2027" {
		t.Fatalf("session after the rename: %+v %+v", s.Delta, s.Index)
	}

	// A former handle is taken: no project may be created or renamed to it.
	if _, err := ten.CreateProject(ctx, "kunden", "Neu"); knowmind.ErrorCode(err) != knowmind.ECONFLICT {
		t.Fatalf("create a project with a former handle: %v", err)
	}
	wantRPCError(t, callTool(t, c.url, c.write, "knowmind_rename_project", map[string]any{"project": "main", "handle": "kunden"}), codeConflict, "")

	// Renaming back: the former handle is the handle again, the other one an alias; again is a no-op.
	res = rename(c.write, map[string]any{"project": "kunden-2027", "handle": "kunden"})
	if res.Handle != "kunden" || res.Name != "Kunden 2027" || !slices.Equal(res.Aliases, []string{"kunden-2027"}) {
		t.Fatalf("rename back = %+v", res)
	}
	if again := rename(c.write, map[string]any{"project": "kunden-2027", "handle": "kunden"}); again.Handle != "kunden" || !slices.Equal(again.Aliases, []string{"kunden-2027"}) {
		t.Fatalf("the same rename again = %+v", again)
	}
	if n := c.get(akte.ID, false); n.Project != "kunden" || n.Path != "Müller" {
		t.Fatalf("note after the renames: %+v", n)
	}
}
