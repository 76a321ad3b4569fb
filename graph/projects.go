package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// Projects of a tenant's notes (docs/notes.md). People make them with `knowmind project
// create`; agents only name them. Every tenant has "main", written the first time anything asks
// for the tenant's projects, so a tenant made before notes existed gets it too.

// createProjectUpsert writes the project unless its handle exists (Project.handle is @upsert:
// two concurrent creates of one handle conflict and the retry finds the other's).
const createProjectUpsert = `query q($handle: string) {
  p as var(func: eq(Project.handle, $handle))
  existing(func: uid(p)) { uid }
}`

// listProjectsQuery lists the projects with their number of visible (indexed) shared notes.
const listProjectsQuery = `{
  projects(func: has(Project.handle), orderasc: Project.handle) {
    uid Project.handle Project.name Project.created_at
    notes: count(~Note.project @filter(eq(Memory.status, "indexed") AND eq(Note.class, "user-doc")))
  }
}`

const projectByHandleQuery = `query q($handle: string) {
  p(func: eq(Project.handle, $handle), first: 1) { uid Project.handle }
}`

type dgProject struct {
	UID       string    `json:"uid"`
	Handle    string    `json:"Project.handle"`
	Name      string    `json:"Project.name"`
	CreatedAt time.Time `json:"Project.created_at"`
	Notes     int       `json:"notes"`
}

// CreateProject makes a project (ECONFLICT when the handle exists).
func (t *Tenant) CreateProject(ctx context.Context, handle, name string) (knowmind.Project, error) {
	p, created, err := t.createProject(ctx, handle, name)
	if err != nil {
		return knowmind.Project{}, err
	}
	if !created {
		return knowmind.Project{}, knowmind.Errorf(knowmind.ECONFLICT, "project %q exists", handle)
	}
	return p, nil
}

func (t *Tenant) createProject(ctx context.Context, handle, name string) (knowmind.Project, bool, error) {
	if err := knowmind.ValidProjectHandle(handle); err != nil {
		return knowmind.Project{}, false, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		name = handle
	}
	if utf8.RuneCountInString(name) > knowmind.MaxProjectNameChars || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
		return knowmind.Project{}, false, knowmind.InvalidParam("name", "name must be at most %d printable characters", knowmind.MaxProjectNameChars)
	}
	now := time.Now().UTC()
	body, _ := json.Marshal(map[string]any{"uid": "_:p", "dgraph.type": "Project", "Project.handle": handle,
		"Project.name": name, "Project.created_at": now.Format(time.RFC3339Nano)})
	var out struct{ Existing []struct{ UID string } }
	err := RunTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Existing = nil
		resp, err := txn.Do(ctx, &api.Request{Query: createProjectUpsert, Vars: map[string]string{"$handle": handle},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(p), 0))`, SetJson: body}}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return knowmind.Project{}, false, fmt.Errorf("create project: %w", err)
	}
	return knowmind.Project{Handle: handle, Name: name, CreatedAt: now}, len(out.Existing) == 0, nil
}

// ListProjects lists the projects scope reaches, by handle, with their note counts.
func (t *Tenant) ListProjects(ctx context.Context, scope knowmind.NoteScope) ([]knowmind.Project, error) {
	if _, _, err := t.createProject(ctx, knowmind.DefaultProject, "Main"); err != nil {
		return nil, err
	}
	var out struct{ Projects []dgProject }
	if err := t.queryVars(ctx, listProjectsQuery, nil, &out); err != nil {
		return nil, fmt.Errorf("list projects: %w", err)
	}
	list := []knowmind.Project{}
	for _, p := range out.Projects {
		if scope.AllowsProject(p.Handle) {
			list = append(list, knowmind.Project{Handle: p.Handle, Name: p.Name, CreatedAt: p.CreatedAt, Notes: p.Notes})
		}
	}
	return list, nil
}

// project resolves a handle the caller named: invalid → -32602, outside the token's projects →
// the scope error, unknown → 404. "main" is made on first use.
func (t *Tenant) project(ctx context.Context, scope knowmind.NoteScope, handle string) (string, error) {
	handle = strings.TrimSpace(handle)
	if err := knowmind.ValidProjectHandle(handle); err != nil {
		return "", err
	}
	if !scope.AllowsProject(handle) {
		return "", knowmind.Errorf(knowmind.ESCOPE, "project %q is outside this token's projects", handle)
	}
	var out struct{ P []dgProject }
	if err := t.queryVars(ctx, projectByHandleQuery, map[string]string{"$handle": handle}, &out); err != nil {
		return "", fmt.Errorf("look up project: %w", err)
	}
	if len(out.P) == 0 && handle == knowmind.DefaultProject {
		if _, _, err := t.createProject(ctx, handle, "Main"); err != nil {
			return "", err
		}
		if err := t.queryVars(ctx, projectByHandleQuery, map[string]string{"$handle": handle}, &out); err != nil {
			return "", fmt.Errorf("look up project: %w", err)
		}
	}
	if len(out.P) == 0 {
		return "", &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "project", Message: fmt.Sprintf("project %q not found", handle)}
	}
	return out.P[0].UID, nil
}

// checkProjectsExist is CreateProjectToken's check of --projects.
func (t *Tenant) checkProjectsExist(ctx context.Context, handles []string) error {
	if len(handles) == 0 {
		return knowmind.InvalidParam("projects", "a project-limited token needs at least one project")
	}
	for _, h := range handles {
		if _, err := t.project(ctx, knowmind.NoteScope{}, h); err != nil {
			return err
		}
	}
	return nil
}
