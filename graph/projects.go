package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// Projects of a tenant's notes (docs/notes.md). People make them with `knowmind project
// create`; agents only name them (and rename them: knowmind_rename_project). Every tenant has
// "main", written the first time anything asks for the tenant's projects, so a tenant made before
// notes existed gets it too. A renamed project keeps its former handles as Project.aliases: they
// still resolve (a token limited to the old handle reaches it), so no project may take one.

// createProjectUpsert writes the project unless its handle exists as a handle or a former
// handle (both @upsert: two concurrent creates of one handle conflict and the retry finds the
// other's).
const createProjectUpsert = `query q($handle: string) {
  p as var(func: eq(Project.handle, $handle))
  a as var(func: eq(Project.aliases, $handle))
  existing(func: uid(p, a)) { uid }
}`

// listProjectsQuery lists the projects with their number of visible (indexed) shared notes.
const listProjectsQuery = `{
  projects(func: has(Project.handle), orderasc: Project.handle) {
    uid Project.handle Project.name Project.created_at Project.aliases
    notes: count(~Note.project @filter(eq(Memory.status, "indexed") AND eq(Note.class, "user-doc")))
  }
}`

// projectByHandleQuery finds a project by its handle or, failing that, a former one.
const projectByHandleQuery = `query q($handle: string) {
  p(func: eq(Project.handle, $handle), first: 1) { uid Project.handle Project.name Project.created_at Project.aliases }
  a(func: eq(Project.aliases, $handle), first: 1) { uid Project.handle Project.name Project.created_at Project.aliases }
}`

// renameProjectUpsert matches the project only while it still has the handle the rename read
// (CAS on the handle: of two concurrent renames one finds it changed), and finds another
// project holding the new handle as its handle or a former one.
const renameProjectUpsert = `query q($uid: string, $old: string, $new: string) {
  p as var(func: uid($uid)) @filter(eq(Project.handle, $old))
  t as var(func: eq(Project.handle, $new)) @filter(NOT uid(p))
  a as var(func: eq(Project.aliases, $new)) @filter(NOT uid(p))
  matched(func: uid(p)) { uid }
  taken(func: uid(t, a), first: 1) { Project.handle }
}`

type dgProject struct {
	UID       string    `json:"uid"`
	Handle    string    `json:"Project.handle"`
	Name      string    `json:"Project.name"`
	CreatedAt time.Time `json:"Project.created_at"`
	Aliases   []string  `json:"Project.aliases"`
	Notes     int       `json:"notes"`
}

// projectAllowed says whether scope reaches a project by its handle or a former one (a token made
// with --projects old keeps reaching the project after a rename).
func projectAllowed(scope knowmind.NoteScope, handle string, aliases []string) bool {
	return scope.AllowsProject(handle) || slices.ContainsFunc(aliases, scope.AllowsProject)
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
	if err := checkProjectName(name); err != nil {
		return knowmind.Project{}, false, err
	}
	now := time.Now().UTC()
	body, _ := json.Marshal(map[string]any{"uid": "_:p", "dgraph.type": "Project", "Project.handle": handle,
		"Project.name": name, "Project.created_at": now.Format(time.RFC3339Nano)})
	var out struct{ Existing []struct{ UID string } }
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Existing = nil
		resp, err := txn.Do(ctx, &api.Request{Query: createProjectUpsert, Vars: map[string]string{"$handle": handle},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(p), 0) AND eq(len(a), 0))`, SetJson: body}}})
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

// noteCountQuery counts every note of the tenant: current, private and in the trash.
const noteCountQuery = `{ n(func: eq(Memory.kind, "note")) { count(uid) } }`

// NoteCount is how many notes the tenant holds (trashed and private ones included).
func (t *Tenant) NoteCount(ctx context.Context) (int, error) {
	var out struct {
		N []struct {
			Count int `json:"count"`
		}
	}
	if err := t.queryVars(ctx, noteCountQuery, nil, &out); err != nil {
		return 0, fmt.Errorf("count notes: %w", err)
	}
	if len(out.N) == 0 {
		return 0, nil
	}
	return out.N[0].Count, nil
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
		if projectAllowed(scope, p.Handle, p.Aliases) {
			list = append(list, knowmind.Project{Handle: p.Handle, Name: p.Name, CreatedAt: p.CreatedAt, Notes: p.Notes, Aliases: p.Aliases})
		}
	}
	return list, nil
}

// project resolves a handle the caller named to the project's uid (see projectRef).
func (t *Tenant) project(ctx context.Context, scope knowmind.NoteScope, handle string) (string, error) {
	p, err := t.projectRef(ctx, scope, handle)
	return p.UID, err
}

// projectRef resolves a handle (or a former handle) the caller named: invalid → -32602, outside
// the token's projects → the scope error, unknown → 404 (the scope error when the token could not
// reach it anyway, so a limited token learns nothing of other projects). "main" is made on first
// use.
func (t *Tenant) projectRef(ctx context.Context, scope knowmind.NoteScope, handle string) (dgProject, error) {
	handle = strings.TrimSpace(handle)
	if err := knowmind.ValidProjectHandle(handle); err != nil {
		return dgProject{}, err
	}
	outside := knowmind.Errorf(knowmind.ESCOPE, "project %q is outside this token's projects", handle)
	var out struct{ P, A []dgProject }
	if err := t.queryVars(ctx, projectByHandleQuery, map[string]string{"$handle": handle}, &out); err != nil {
		return dgProject{}, fmt.Errorf("look up project: %w", err)
	}
	if len(out.P) == 0 && len(out.A) == 0 && handle == knowmind.DefaultProject && scope.AllowsProject(handle) {
		if _, _, err := t.createProject(ctx, handle, "Main"); err != nil {
			return dgProject{}, err
		}
		if err := t.queryVars(ctx, projectByHandleQuery, map[string]string{"$handle": handle}, &out); err != nil {
			return dgProject{}, fmt.Errorf("look up project: %w", err)
		}
	}
	found := append(out.P, out.A...)
	if len(found) == 0 {
		if !scope.AllowsProject(handle) {
			return dgProject{}, outside
		}
		return dgProject{}, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "project", Message: fmt.Sprintf("project %q not found", handle)}
	}
	if !projectAllowed(scope, found[0].Handle, found[0].Aliases) {
		return dgProject{}, outside
	}
	return found[0], nil
}

// RenameProject is knowmind_rename_project: a new handle and/or name for the project named by
// handle (or a former handle). The old handle becomes an alias that keeps resolving, for the
// agents and tokens that know it; notes, links and ids stay (notes point at the project node).
// A handle another project holds (as handle or alias) is 409; so is a rename that finds the
// handle changed meanwhile.
func (t *Tenant) RenameProject(ctx context.Context, scope knowmind.NoteScope, handle, newHandle, newName string) (knowmind.Project, error) {
	newHandle, newName = strings.TrimSpace(newHandle), strings.TrimSpace(newName)
	if newHandle == "" && newName == "" {
		return knowmind.Project{}, knowmind.InvalidParam("handle", "give a new handle, a new name or both")
	}
	if newHandle != "" {
		if err := knowmind.ValidProjectHandle(newHandle); err != nil {
			return knowmind.Project{}, knowmind.InvalidParam("handle", "handle: %s", err.(*knowmind.Error).Message)
		}
	}
	if err := checkProjectName(newName); err != nil {
		return knowmind.Project{}, err
	}
	p, err := t.projectRef(ctx, scope, handle)
	if err != nil {
		return knowmind.Project{}, err
	}
	if newHandle == "" {
		newHandle = p.Handle
	}
	if newName == "" {
		newName = p.Name
	}
	set := map[string]any{"uid": "uid(p)", "Project.handle": newHandle, "Project.name": newName}
	var del []byte
	aliases := slices.DeleteFunc(slices.Clone(p.Aliases), func(a string) bool { return a == newHandle })
	if newHandle != p.Handle {
		if !slices.Contains(aliases, p.Handle) {
			aliases = append(aliases, p.Handle)
		}
		set["Project.aliases"] = []string{p.Handle}
		if slices.Contains(p.Aliases, newHandle) { // renamed back to a former handle
			del = []byte(fmt.Sprintf("uid(p) <Project.aliases> %q .", newHandle))
		}
	}
	body, _ := json.Marshal(set)
	var out struct {
		Matched []struct{ UID string }
		Taken   []dgProject
	}
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Matched, out.Taken = nil, nil
		resp, err := txn.Do(ctx, &api.Request{Query: renameProjectUpsert,
			Vars:      map[string]string{"$uid": p.UID, "$old": p.Handle, "$new": newHandle},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(p), 1) AND eq(len(t), 0) AND eq(len(a), 0))`, SetJson: body, DelNquads: del}}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return knowmind.Project{}, fmt.Errorf("rename project: %w", err)
	}
	if len(out.Taken) > 0 {
		return knowmind.Project{}, &knowmind.Error{Code: knowmind.ECONFLICT, Param: "handle",
			Message: fmt.Sprintf("handle %q is taken by project %q", newHandle, out.Taken[0].Handle), Data: map[string]any{"takenBy": out.Taken[0].Handle}}
	}
	if len(out.Matched) == 0 {
		return knowmind.Project{}, knowmind.Errorf(knowmind.ECONFLICT, "project %q was renamed meanwhile; read knowmind_list_projects and try again", p.Handle)
	}
	t.c.log.Info("project renamed", "tenant", t.Name, "from", p.Handle, "to", newHandle)
	var notes struct{ Projects []dgProject }
	res := knowmind.Project{Handle: newHandle, Name: newName, CreatedAt: p.CreatedAt, Aliases: nonNil(aliases)}
	if err := t.queryVars(ctx, listProjectsQuery, nil, &notes); err == nil {
		for _, q := range notes.Projects {
			if q.UID == p.UID {
				res.Notes = q.Notes
			}
		}
	}
	return res, nil
}

// checkProjectName refuses a display name that is too long or holds control characters.
func checkProjectName(name string) error {
	if utf8.RuneCountInString(name) > knowmind.MaxProjectNameChars || strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 }) {
		return knowmind.InvalidParam("name", "name must be at most %d printable characters", knowmind.MaxProjectNameChars)
	}
	return nil
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
