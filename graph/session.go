package graph

// Session bootstrap and navigation over notes (seed 004, docs/notes.md): knowmind_start_session
// (profile, projects, a project's index, the delta since the principal's previous visit, the
// values in use), knowmind_list_notes (a folder's notes and subfolders, by title, with a
// cursor) and knowmind_recent_activity (the notes' latest changes, newest first).
//
// A principal's last start_session per project hint is a Visit node (Visit.key = principal NUL
// project, @upsert). The delta is read from Memory.updated_at (indexed) and each note's
// provenance: a note whose latest write is by someone else since the previous visit.

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
)

// activityFields are what a listing or the delta reads of a note.
const activityFields = `Memory.id Memory.title Memory.status Memory.tags Memory.created_at Memory.updated_at
    Note.path Note.type Note.version Note.revision Note.created_by Note.updated_by Note.updated_via Note.actor_kind
    Note.trashed_at Note.project { Project.handle }`

// profileQuery reads the principal's private user profile: one note per category.
const profileQuery = `query q($owner: string) {
  p(func: eq(Note.owner, $owner), orderasc: Memory.title) @filter(eq(Note.class, "user-profile") AND eq(Memory.status, "indexed")) {
    Memory.id Memory.title Memory.content
  }
}`

// projectNotesQuery reads the folders, types and tags of a project's current shared notes.
var projectNotesQuery = `query q($p: string) {
  p(func: uid($p)) {
    n: ~Note.project (first: ` + strconv.Itoa(knowmind.MaxIndexedNotes+1) + `) @filter(eq(Memory.status, "indexed") AND eq(Note.class, "user-doc")) {
      Memory.id Note.path Note.type Memory.tags
    }
  }
}`

// deltaQuery reads the shared notes of a project written since $since, newest first.
var deltaQuery = `query q($p: string, $since: string) {
  d(func: ge(Memory.updated_at, $since), orderdesc: Memory.updated_at, first: ` + strconv.Itoa(4*knowmind.MaxDeltaItems) + `)
    @filter(eq(Memory.kind, "note") AND eq(Note.class, "user-doc") AND uid_in(Note.project, $p)) { ` + activityFields + ` }
}`

// visitUpsert reads and moves a principal's last visit in one transaction.
const visitUpsert = `query q($key: string) {
  v as var(func: eq(Visit.key, $key))
  prev(func: uid(v)) { Visit.at }
}`

// listNotesQuery lists a folder's notes by title after a title ({{.Path}}: the folder filter).
const listNotesQuery = `query q($p: string, $after: string, $tag: string, $first: int) {
  p(func: uid($p)) {
    n: ~Note.project (orderasc: Memory.title, first: $first)
      @filter(eq(Memory.status, "indexed") AND eq(Note.class, "user-doc") AND {{.Path}} AND gt(Memory.title, $after){{.Tag}}) {
      Memory.id Memory.title Memory.tags Memory.updated_at Note.path Note.type Note.version
    }
  }
}`

// activityQuery lists shared notes of the scope's projects by their latest write.
const activityQuery = `query q($k: int, $before: string) {
  items(func: eq(Memory.kind, "note"), orderdesc: Memory.updated_at, first: $k)
    @filter(has(Memory.updated_at) AND eq(Note.class, "user-doc") AND ({{.Projects}}){{.After}}) { ` + activityFields + ` }
}`

type dgActivity struct {
	ID        string     `json:"Memory.id"`
	Title     string     `json:"Memory.title"`
	Status    string     `json:"Memory.status"`
	Tags      []string   `json:"Memory.tags"`
	CreatedAt time.Time  `json:"Memory.created_at"`
	UpdatedAt time.Time  `json:"Memory.updated_at"`
	Path      string     `json:"Note.path"`
	Type      string     `json:"Note.type"`
	Version   string     `json:"Note.version"`
	Revision  int        `json:"Note.revision"`
	CreatedBy string     `json:"Note.created_by"`
	UpdatedBy string     `json:"Note.updated_by"`
	Via       string     `json:"Note.updated_via"`
	ActorKind string     `json:"Note.actor_kind"`
	TrashedAt *time.Time `json:"Note.trashed_at"`
	Project   *struct {
		Handle string `json:"Project.handle"`
	} `json:"Note.project"`
}

func (a dgActivity) item() knowmind.ActivityItem {
	op := knowmind.ActivityEdited
	switch {
	case a.Status == knowmind.StatusTrashed:
		op = knowmind.ActivityTrashed
	case a.Revision <= 1:
		op = knowmind.ActivityCreated
	}
	it := knowmind.ActivityItem{ID: a.ID, Title: a.Title, Path: a.Path, Operation: op, By: a.UpdatedBy, Via: a.Via,
		ActorKind: cmp.Or(a.ActorKind, "agent"), At: a.UpdatedAt, Revision: a.Revision}
	if a.Project != nil {
		it.Project = a.Project.Handle
	}
	return it
}

// Capabilities reports what the engine can do: whether vectors carry meaning (a model) or
// only letters (the hash embedder), and that notes have a trash and revisions.
func (c *Client) Capabilities() knowmind.Capabilities {
	caps := knowmind.Capabilities{Vector: knowmind.VectorNone, Trash: true, Revisions: true}
	if e := c.cfg.Embedder; e != nil {
		caps.Vector = knowmind.VectorSemantic
		if strings.HasPrefix(e.ID(), "hash-") {
			caps.Vector = knowmind.VectorLexical
		}
	}
	return caps
}

// Profile is the caller's private user profile (knowmind_remember_about_user), by category.
func (t *Tenant) Profile(ctx context.Context, scope knowmind.NoteScope) ([]knowmind.ProfileEntry, error) {
	list := []knowmind.ProfileEntry{}
	if scope.Principal == "" {
		return list, nil
	}
	var out struct {
		P []struct {
			ID      string `json:"Memory.id"`
			Title   string `json:"Memory.title"`
			Content string `json:"Memory.content"`
		}
	}
	if err := t.queryVars(ctx, profileQuery, map[string]string{"$owner": scope.Principal}, &out); err != nil {
		return nil, fmt.Errorf("profile: %w", err)
	}
	for _, p := range out.P {
		list = append(list, knowmind.ProfileEntry{ID: p.ID, Category: p.Title, Content: p.Content})
	}
	return list, nil
}

// StartSession is knowmind_start_session: profile and projects always; with a project hint
// the project's index, knownValues and what others changed there since this principal's
// previous start_session with that hint (which this call moves to now).
func (t *Tenant) StartSession(ctx context.Context, scope knowmind.NoteScope, project string) (knowmind.Session, error) {
	var s knowmind.Session
	var err error
	s.Principal = scope.Principal
	if s.Profile, err = t.Profile(ctx, scope); err != nil {
		return s, err
	}
	if s.Projects, err = t.ListProjects(ctx, scope); err != nil {
		return s, err
	}
	if project == "" {
		return s, nil
	}
	p, err := t.projectRef(ctx, scope, project)
	if err != nil {
		return s, err
	}
	puid := p.UID
	if s.Index, s.KnownValues, err = t.projectIndex(ctx, p.Handle, puid); err != nil {
		return s, err
	}
	for _, p := range s.Profile {
		s.KnownValues.Categories = append(s.KnownValues.Categories, knowmind.ValueCount{Value: p.Category, Count: 1})
	}
	since, err := t.moveVisit(ctx, scope.Principal, puid)
	if err != nil {
		return s, err
	}
	s.Delta, err = t.delta(ctx, scope, puid, since)
	return s, err
}

// projectIndex counts a project's notes by top-level folder, and its types and tags.
func (t *Tenant) projectIndex(ctx context.Context, handle, puid string) (*knowmind.ProjectIndex, *knowmind.KnownValues, error) {
	var out struct {
		P []struct {
			N []struct {
				Path string   `json:"Note.path"`
				Type string   `json:"Note.type"`
				Tags []string `json:"Memory.tags"`
			} `json:"n"`
		}
	}
	if err := t.queryVars(ctx, projectNotesQuery, map[string]string{"$p": puid}, &out); err != nil {
		return nil, nil, fmt.Errorf("project index: %w", err)
	}
	idx := &knowmind.ProjectIndex{Project: handle, Folders: []knowmind.ValueCount{}}
	folders, types, tags := map[string]int{}, map[string]int{}, map[string]int{}
	if len(out.P) > 0 {
		notes := out.P[0].N
		if len(notes) > knowmind.MaxIndexedNotes {
			notes, idx.Truncated = notes[:knowmind.MaxIndexedNotes], true
		}
		idx.Notes = len(notes)
		for _, n := range notes {
			if n.Path != "" {
				top, _, _ := strings.Cut(n.Path, "/")
				folders[top]++
			}
			if n.Type != "" {
				types[n.Type]++
			}
			for _, tag := range n.Tags {
				tags[tag]++
			}
		}
	}
	idx.Folders = sortedCounts(folders, 0)
	return idx, &knowmind.KnownValues{Categories: []knowmind.ValueCount{}, Tags: sortedCounts(tags, knowmind.MaxKnownValues),
		Types: sortedCounts(types, knowmind.MaxKnownValues)}, nil
}

// sortedCounts orders values by count (most first), then by value; limit 0 keeps all, ordered
// by value.
func sortedCounts(m map[string]int, limit int) []knowmind.ValueCount {
	list := make([]knowmind.ValueCount, 0, len(m))
	for v, n := range m {
		list = append(list, knowmind.ValueCount{Value: v, Count: n})
	}
	slices.SortFunc(list, func(a, b knowmind.ValueCount) int {
		if limit > 0 && a.Count != b.Count {
			return b.Count - a.Count
		}
		return strings.Compare(a.Value, b.Value)
	})
	if limit > 0 && len(list) > limit {
		list = list[:limit]
	}
	return list
}

// moveVisit records now as the principal's last visit to the project (its uid, so a renamed
// project keeps its visits) and returns the previous one (nil on the first).
func (t *Tenant) moveVisit(ctx context.Context, principal, projectUID string) (*time.Time, error) {
	key := principal + "\x00" + projectUID
	now := nowString()
	var out struct {
		Prev []struct {
			At time.Time `json:"Visit.at"`
		}
	}
	set, _ := json.Marshal(map[string]any{"uid": "uid(v)", "dgraph.type": "Visit", "Visit.key": key, "Visit.at": now})
	create, _ := json.Marshal(map[string]any{"uid": "_:v", "dgraph.type": "Visit", "Visit.key": key, "Visit.at": now})
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Prev = nil
		resp, err := txn.Do(ctx, &api.Request{Query: visitUpsert, Vars: map[string]string{"$key": key},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(v), 1))`, SetJson: set}, {Cond: `@if(eq(len(v), 0))`, SetJson: create}}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("record visit: %w", err)
	}
	if len(out.Prev) == 0 {
		return nil, nil
	}
	at := out.Prev[0].At
	return &at, nil
}

// delta lists the project's notes whose latest write since since is someone else's.
func (t *Tenant) delta(ctx context.Context, scope knowmind.NoteScope, puid string, since *time.Time) (*knowmind.SessionDelta, error) {
	d := &knowmind.SessionDelta{Since: since, FirstVisit: since == nil, Created: []knowmind.ActivityItem{},
		Edited: []knowmind.ActivityItem{}, Trashed: []knowmind.ActivityItem{}}
	if since == nil {
		return d, nil
	}
	var out struct{ D []dgActivity }
	if err := t.queryVars(ctx, deltaQuery, map[string]string{"$p": puid, "$since": since.UTC().Format(time.RFC3339Nano)}, &out); err != nil {
		return nil, fmt.Errorf("session delta: %w", err)
	}
	d.Truncated = len(out.D) == 4*knowmind.MaxDeltaItems
	for _, a := range out.D {
		if a.UpdatedBy == scope.Principal || !a.UpdatedAt.After(*since) {
			continue
		}
		it := a.item()
		var list *[]knowmind.ActivityItem
		switch {
		case a.Status == knowmind.StatusTrashed:
			if a.TrashedAt == nil || !a.TrashedAt.After(*since) {
				continue
			}
			list = &d.Trashed
		case a.Status != knowmind.StatusIndexed:
			continue
		case a.CreatedAt.After(*since) && a.CreatedBy != scope.Principal:
			it.Operation = knowmind.ActivityCreated
			list = &d.Created
		default:
			it.Operation = knowmind.ActivityEdited
			list = &d.Edited
		}
		if len(*list) == knowmind.MaxDeltaItems {
			d.Truncated = true
			continue
		}
		*list = append(*list, it)
	}
	return d, nil
}

// ListNotes is knowmind_list_notes: the shared notes directly in a folder, by title (unique in
// a folder, so the order is total), and its direct subfolders with their note counts. The
// cursor is the last title returned: a note created or removed meanwhile shifts nothing.
func (t *Tenant) ListNotes(ctx context.Context, scope knowmind.NoteScope, q knowmind.ListNotesQuery) (knowmind.NoteListing, error) {
	if q.Limit < 1 || q.Limit > knowmind.MaxListNotes {
		return knowmind.NoteListing{}, knowmind.InvalidParam("limit", "limit must be between 1 and %d", knowmind.MaxListNotes)
	}
	path, err := knowmind.CleanNotePath("path", q.Path)
	if err != nil {
		return knowmind.NoteListing{}, err
	}
	after := ""
	if q.Cursor != "" {
		raw, err := base64.RawURLEncoding.DecodeString(q.Cursor)
		// A title is UTF-8: other bytes would reach Dgraph's gRPC as an invalid string.
		if err != nil || len(raw) == 0 || len(raw) > 4*knowmind.MaxTitleChars || !utf8.Valid(raw) {
			return knowmind.NoteListing{}, knowmind.InvalidParam("cursor", "cursor is not one list_notes returned")
		}
		after = string(raw)
	}
	proj, err := t.projectRef(ctx, scope, q.Project)
	if err != nil {
		return knowmind.NoteListing{}, err
	}
	puid := proj.UID
	vars := map[string]string{"$p": puid, "$after": after, "$first": strconv.Itoa(q.Limit + 1)}
	query := listNotesQuery
	if path == "" {
		query = strings.Replace(query, "{{.Path}}", "NOT has(Note.path)", 1)
	} else {
		query = strings.Replace(query, "{{.Path}}", "eq(Note.path, $path)", 1)
		query = strings.Replace(query, "query q($p: string,", "query q($p: string, $path: string,", 1)
		vars["$path"] = path
	}
	if q.Tag != "" {
		query = strings.Replace(query, "{{.Tag}}", " AND eq(Memory.tags, $tag)", 1)
		vars["$tag"] = q.Tag
	} else {
		query = strings.Replace(query, "{{.Tag}}", "", 1)
		query = strings.Replace(query, " $tag: string,", "", 1)
	}
	var out struct {
		P []struct {
			N []struct {
				ID        string    `json:"Memory.id"`
				Title     string    `json:"Memory.title"`
				Tags      []string  `json:"Memory.tags"`
				UpdatedAt time.Time `json:"Memory.updated_at"`
				Path      string    `json:"Note.path"`
				Type      string    `json:"Note.type"`
				Version   string    `json:"Note.version"`
			} `json:"n"`
		}
	}
	if err := t.queryVars(ctx, query, vars, &out); err != nil {
		return knowmind.NoteListing{}, fmt.Errorf("list notes: %w", err)
	}
	res := knowmind.NoteListing{Project: proj.Handle, Path: path, Notes: []knowmind.NoteSummary{}}
	if len(out.P) > 0 {
		rows := out.P[0].N
		if len(rows) > q.Limit {
			rows = rows[:q.Limit]
			next := base64.RawURLEncoding.EncodeToString([]byte(rows[len(rows)-1].Title))
			res.NextCursor = &next
		}
		for _, n := range rows {
			res.Notes = append(res.Notes, knowmind.NoteSummary{ID: n.ID, Title: n.Title, Path: n.Path, Type: n.Type,
				Tags: nonNil(n.Tags), VersionToken: n.Version, UpdatedAt: n.UpdatedAt})
		}
	}
	if res.Folders, err = t.subfolders(ctx, puid, path); err != nil {
		return knowmind.NoteListing{}, err
	}
	return res, nil
}

// subfolders counts the notes below each direct subfolder of path.
func (t *Tenant) subfolders(ctx context.Context, puid, path string) ([]knowmind.ValueCount, error) {
	var out struct {
		P []struct {
			N []struct {
				Path string `json:"Note.path"`
			} `json:"n"`
		}
	}
	if err := t.queryVars(ctx, projectNotesQuery, map[string]string{"$p": puid}, &out); err != nil {
		return nil, fmt.Errorf("list folders: %w", err)
	}
	counts := map[string]int{}
	prefix := ""
	if path != "" {
		prefix = path + "/"
	}
	if len(out.P) > 0 {
		for _, n := range out.P[0].N {
			rest, ok := strings.CutPrefix(n.Path, prefix)
			if !ok || rest == "" || n.Path == path {
				continue
			}
			sub, _, _ := strings.Cut(rest, "/")
			counts[sub]++
		}
	}
	return sortedCounts(counts, 0), nil
}

// RecentActivity is knowmind_recent_activity: the shared notes of the scope's projects (one
// project when given) by their latest write, newest first, trashed ones included; k per page.
func (t *Tenant) RecentActivity(ctx context.Context, scope knowmind.NoteScope, project string, k int, cursor string) (knowmind.ActivityPage, error) {
	if k < 1 || k > knowmind.MaxActivity {
		return knowmind.ActivityPage{}, knowmind.InvalidParam("limit", "limit must be between 1 and %d", knowmind.MaxActivity)
	}
	vars := map[string]string{}
	after := ""
	var cur recentCursor
	if cursor != "" {
		var err error
		if len(cursor) > 200 {
			return knowmind.ActivityPage{}, knowmind.InvalidParam("cursor", "cursor is not one recent_activity returned")
		}
		if cur, err = parseRecentCursor(cursor); err != nil {
			return knowmind.ActivityPage{}, knowmind.InvalidParam("cursor", "cursor is not one recent_activity returned")
		}
		after = " AND le(Memory.updated_at, $before)"
		vars["$before"] = cur.at.Format(time.RFC3339Nano)
	}
	var uids []string
	if project != "" {
		puid, err := t.project(ctx, scope, project)
		if err != nil {
			return knowmind.ActivityPage{}, err
		}
		uids = []string{puid}
	} else {
		var out struct{ Projects []dgProject }
		if err := t.queryVars(ctx, listProjectsQuery, nil, &out); err != nil {
			return knowmind.ActivityPage{}, fmt.Errorf("recent activity: %w", err)
		}
		for _, p := range out.Projects {
			if projectAllowed(scope, p.Handle, p.Aliases) {
				uids = append(uids, p.UID)
			}
		}
	}
	page := knowmind.ActivityPage{Items: []knowmind.ActivityItem{}}
	if len(uids) == 0 {
		return page, nil
	}
	projects := make([]string, len(uids))
	for i, u := range uids {
		projects[i] = "uid_in(Note.project, " + u + ")"
	}
	vars["$k"] = strconv.Itoa(k + cur.seen + 1)
	q := strings.Replace(activityQuery, "{{.Projects}}", strings.Join(projects, " OR "), 1)
	q = strings.Replace(q, "{{.After}}", after, 1)
	if cursor == "" {
		q = strings.Replace(q, "query q($k: int, $before: string)", "query q($k: int)", 1)
	}
	var out struct{ Items []dgActivity }
	if err := t.queryVars(ctx, q, vars, &out); err != nil {
		return page, fmt.Errorf("recent activity: %w", err)
	}
	rows, next := cutPage(cur, out.Items, k, func(a dgActivity) time.Time { return a.UpdatedAt })
	for _, a := range rows {
		page.Items = append(page.Items, a.item())
	}
	if next != "" {
		page.NextCursor = &next
	}
	return page, nil
}
