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
	"github.com/knowmind/knowmind/shapes"
)

// Notes in knowmind export / import (docs/bulk.md): projects first, each note among the
// memories (its memory fields plus knowmind.NoteFields), then after the relations every former
// body (revision), every link waiting for a title (forward) and every principal's last visit of
// a project (visit). Everything is written as stored — ids, version tokens, revision numbers,
// provenance and times — so a tenant moved between cells reads the same notes, history
// included, and an agent's version token still matches. What is derived from uids of the
// namespace (title keys, visit keys) or from the text (chunks, vectors, a revision's searchable
// text) is computed again by the import; links between notes are relation records.
//
// Import is idempotent: a project, note, revision, forward or visit the tenant holds (by handle,
// id, note and revision number, note and title, principal and project) is unchanged, so an
// interrupted import resumes by writing again.

const exportProjectsQuery = `query q($after: string, $n: int) {
  m(func: has(Project.handle), first: $n, after: $after) {
    uid Project.handle Project.name Project.aliases Project.created_at
  }
}`

const exportRevisionsQuery = `query q($after: string, $n: int) {
  m(func: has(Revision.note), first: $n, after: $after) {
    uid Revision.note { Memory.id } Revision.revision Revision.version Revision.title Revision.body
    Revision.path Revision.valid_from Revision.valid_to Revision.by
  }
}`

const exportForwardsQuery = `query q($after: string, $n: int) {
  m(func: has(Forward.from), first: $n, after: $after) {
    uid Forward.from { Memory.id } Forward.project { Project.handle } Forward.title Forward.rel
  }
}`

const exportVisitsQuery = `query q($after: string, $n: int) {
  m(func: has(Visit.key), first: $n, after: $after) { uid Visit.key Visit.at }
}`

// exportNoteFields are the predicates a note adds to the memory fields exportMemoriesQuery reads.
const exportNoteFields = `Note.path Note.class Note.type Note.frontmatter Note.version Note.revision
    Note.aliases Note.link_keys Note.owner Note.created_by Note.created_via Note.updated_by Note.updated_via
    Note.actor_kind Note.trashed_at Note.project { Project.handle }`

// exportProjects emits every project and returns their handles by uid (visits name projects by uid).
func (t *Tenant) exportProjects(ctx context.Context, emit func(knowmind.Record) error) (map[string]string, error) {
	handles := map[string]string{}
	err := t.pageMemories(ctx, exportProjectsQuery, func(raw json.RawMessage) error {
		var p dgProject
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		handles[p.UID] = p.Handle
		return emit(knowmind.Record{Type: knowmind.RecordProject, Project: &knowmind.ProjectRecord{
			Handle: p.Handle, Name: p.Name, Aliases: p.Aliases, CreatedAt: p.CreatedAt.UTC()}})
	})
	if err != nil {
		return nil, fmt.Errorf("export projects: %w", err)
	}
	return handles, nil
}

// noteRecord is the record of a note read by exportMemoriesQuery.
func noteRecord(m dgMemory, n dgNote) knowmind.Record {
	created, validFrom, updated := m.CreatedAt, m.ValidFrom, m.UpdatedAt
	return knowmind.Record{Type: knowmind.RecordNote, ID: m.ID, Title: m.Title, Content: m.Content, Tags: m.Tags,
		Status: m.Status, CreatedAt: &created, UpdatedAt: &updated, ValidFrom: &validFrom, ValidTo: m.ValidTo,
		Note: &knowmind.NoteFields{Project: n.projectHandle(), Path: n.Path, Class: n.Class, Type: n.Type,
			Frontmatter: n.Frontmatter, Version: n.Version, Revision: n.Revision, Aliases: n.Aliases, LinkKeys: n.LinkKeys,
			Owner: n.Owner, CreatedBy: n.CreatedBy, CreatedVia: n.CreatedVia, UpdatedBy: n.UpdatedBy,
			UpdatedVia: n.UpdatedVia, ActorKind: n.ActorKind, TrashedAt: n.TrashedAt}}
}

// exportNoteHistory emits every revision, forward link and visit.
func (t *Tenant) exportNoteHistory(ctx context.Context, projects map[string]string, emit func(knowmind.Record) error) error {
	err := t.pageMemories(ctx, exportRevisionsQuery, func(raw json.RawMessage) error {
		var r struct {
			Note *struct {
				ID string `json:"Memory.id"`
			} `json:"Revision.note"`
			Revision  int       `json:"Revision.revision"`
			Version   string    `json:"Revision.version"`
			Title     string    `json:"Revision.title"`
			Body      string    `json:"Revision.body"`
			Path      string    `json:"Revision.path"`
			ValidFrom time.Time `json:"Revision.valid_from"`
			ValidTo   time.Time `json:"Revision.valid_to"`
			By        string    `json:"Revision.by"`
		}
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		if r.Note == nil || r.Note.ID == "" {
			return nil // its note was deleted (knowmind trash empty deletes both)
		}
		return emit(knowmind.Record{Type: knowmind.RecordRevision, Revision: &knowmind.RevisionRecord{Note: r.Note.ID,
			Revision: r.Revision, Version: r.Version, Title: r.Title, Body: r.Body, Path: r.Path,
			ValidFrom: r.ValidFrom.UTC(), ValidTo: r.ValidTo.UTC(), By: r.By}})
	})
	if err != nil {
		return fmt.Errorf("export revisions: %w", err)
	}
	err = t.pageMemories(ctx, exportForwardsQuery, func(raw json.RawMessage) error {
		var f struct {
			From *struct {
				ID string `json:"Memory.id"`
			} `json:"Forward.from"`
			Project *struct {
				Handle string `json:"Project.handle"`
			} `json:"Forward.project"`
			Title string `json:"Forward.title"`
			Rel   string `json:"Forward.rel"`
		}
		if err := json.Unmarshal(raw, &f); err != nil {
			return err
		}
		if f.From == nil || f.Project == nil {
			return nil
		}
		return emit(knowmind.Record{Type: knowmind.RecordForward, Forward: &knowmind.ForwardRecord{
			From: f.From.ID, Project: f.Project.Handle, Title: f.Title, Rel: f.Rel}})
	})
	if err != nil {
		return fmt.Errorf("export forward links: %w", err)
	}
	err = t.pageMemories(ctx, exportVisitsQuery, func(raw json.RawMessage) error {
		var v struct {
			Key string    `json:"Visit.key"`
			At  time.Time `json:"Visit.at"`
		}
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		principal, projectUID, ok := strings.Cut(v.Key, "\x00")
		handle := projects[projectUID]
		if !ok || handle == "" {
			return nil // keyed by a project that is gone, or by handle before schema 6: a first visit either way
		}
		return emit(knowmind.Record{Type: knowmind.RecordVisit, Visit: &knowmind.VisitRecord{
			Principal: principal, Project: handle, At: v.At.UTC()}})
	})
	if err != nil {
		return fmt.Errorf("export visits: %w", err)
	}
	return nil
}

// exactText checks a text written as stored (not trimmed): valid UTF-8 and at most max characters.
func exactText(param, s string, max int) error {
	if !utf8.ValidString(s) {
		return knowmind.InvalidParam(param, "%s is not valid UTF-8", param)
	}
	if len(s) > max && utf8.RuneCountInString(s) > max {
		return knowmind.InvalidParam(param, "%s exceeds %d characters", param, max)
	}
	return nil
}

// bounded is a text and its bound, for checkTexts.
type bounded struct {
	param, text string
	max         int
}

// checkTexts checks each text with exactText.
func checkTexts(texts ...bounded) error {
	for _, b := range texts {
		if err := exactText(b.param, b.text, b.max); err != nil {
			return err
		}
	}
	return nil
}

// varList declares vals as DQL variables prefix0, prefix1, ... in vars and decl and returns the
// list that names them.
func varList(prefix string, vals []string, vars map[string]string, decl *[]string) string {
	names := make([]string, len(vals))
	for i, v := range vals {
		names[i] = fmt.Sprintf("$%s%d", prefix, i)
		vars[names[i]] = v
		*decl = append(*decl, names[i]+": string")
	}
	return "[" + strings.Join(names, ", ") + "]"
}

// queryLists runs blocks (each a format with one %s for its list of values) over the lists
// in txn.
func queryLists(ctx context.Context, q querier, blocks []string, lists [][]string, out any) error {
	vars := map[string]string{}
	var decl []string
	var body strings.Builder
	for i, b := range blocks {
		if len(lists[i]) == 0 {
			continue
		}
		fmt.Fprintf(&body, "  "+b+"\n", varList(fmt.Sprintf("v%d_", i), lists[i], vars, &decl))
	}
	if body.Len() == 0 {
		return nil
	}
	resp, err := q.QueryWithVars(ctx, "query q("+strings.Join(decl, ", ")+") {\n"+body.String()+"}", vars)
	if err != nil {
		return err
	}
	return json.Unmarshal(resp.Json, out)
}

// checkProjectRecord validates a project record.
func checkProjectRecord(p *knowmind.ProjectRecord) error {
	if p == nil {
		return knowmind.InvalidParam("project", "a project record holds its object in project")
	}
	if err := knowmind.ValidProjectHandle(p.Handle); err != nil {
		return err
	}
	for _, a := range p.Aliases {
		if err := knowmind.ValidProjectHandle(a); err != nil {
			return err
		}
	}
	return checkProjectName(p.Name)
}

// writeProjects writes the project records of recs at idx: a project whose handle the tenant
// holds takes the record's name, former handles and creation time (a new tenant's "main" is
// written on first use, so the target of a move may hold one already); a handle another
// project holds as a former one is a conflict.
func (t *Tenant) writeProjects(ctx context.Context, recs []knowmind.Record, idx []int, results []knowmind.ItemResult) error {
	var todo []int
	var handles []string
	for _, i := range idx {
		p := recs[i].Project
		if err := checkProjectRecord(p); err != nil {
			results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: err}
			continue
		}
		results[i].ID = p.Handle
		todo = append(todo, i)
		handles = append(handles, p.Handle)
	}
	if len(todo) == 0 {
		return nil
	}
	return runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		var have struct {
			P []dgProject `json:"p"`
			A []dgProject `json:"a"`
		}
		err := queryLists(ctx, txn, []string{
			"p(func: eq(Project.handle, %s)) { uid Project.handle Project.name Project.aliases Project.created_at }",
			"a(func: eq(Project.aliases, %s)) { uid Project.handle Project.aliases }",
		}, [][]string{handles, handles}, &have)
		if err != nil {
			return err
		}
		byHandle := map[string]dgProject{}
		for _, p := range have.P {
			byHandle[p.Handle] = p
		}
		aliasOf := map[string]string{}
		for _, p := range have.A {
			for _, a := range p.Aliases {
				aliasOf[a] = p.Handle
			}
		}
		var nodes []any
		var dels []string
		for n, i := range todo {
			p := recs[i].Project
			name := strings.TrimSpace(p.Name)
			if name == "" {
				name = p.Handle
			}
			node := map[string]any{"dgraph.type": "Project", "Project.handle": p.Handle, "Project.name": name,
				"Project.created_at": formatTime(p.CreatedAt)}
			if len(p.Aliases) > 0 {
				node["Project.aliases"] = p.Aliases
			}
			if other := aliasOf[p.Handle]; other != "" && other != p.Handle {
				results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, ID: p.Handle,
					Err: knowmind.Errorf(knowmind.ECONFLICT, "project %q is a former handle of project %q here", p.Handle, other)}
				continue
			}
			stored, ok := byHandle[p.Handle]
			switch {
			case !ok:
				node["uid"] = fmt.Sprintf("_:p%d", n)
				byHandle[p.Handle] = dgProject{Handle: p.Handle, Name: name, Aliases: p.Aliases, CreatedAt: p.CreatedAt}
			case stored.Name == name && stored.CreatedAt.Equal(p.CreatedAt) && slices.Equal(sortedCopy(stored.Aliases), sortedCopy(p.Aliases)):
				results[i].Status = knowmind.ItemUnchanged
				continue
			default:
				if stored.UID == "" { // the same handle twice in a batch: the first wins
					results[i].Status = knowmind.ItemUnchanged
					continue
				}
				node["uid"] = stored.UID
				dels = append(dels, fmt.Sprintf("<%s> <Project.aliases> * .", stored.UID))
			}
			results[i].Status = knowmind.ItemStored
			nodes = append(nodes, node)
		}
		if len(nodes) == 0 {
			return nil
		}
		body, err := json.Marshal(nodes)
		if err != nil {
			return err
		}
		var muts []*api.Mutation
		if len(dels) > 0 {
			muts = append(muts, &api.Mutation{DelNquads: []byte(strings.Join(dels, "\n"))})
		}
		_, err = txn.Do(ctx, &api.Request{Mutations: append(muts, &api.Mutation{SetJson: body})})
		return err
	})
}

func sortedCopy(s []string) []string {
	c := slices.Clone(s)
	slices.Sort(c)
	return c
}

// noteClasses are the classes a note may have.
var noteClasses = []string{knowmind.ClassUserDoc, knowmind.ClassAgentMemory, knowmind.ClassUserProfile}

// checkNoteRecord validates a note record and turns it into an entry, chunked (not embedded).
func checkNoteRecord(r knowmind.Record) (*bulkEntry, error) {
	n := r.Note
	if n == nil {
		return nil, knowmind.InvalidParam("note", "a note record holds its note fields in note")
	}
	if r.ID == "" {
		return nil, knowmind.InvalidParam("id", "a note record needs its id")
	}
	if !slices.Contains(noteClasses, n.Class) {
		return nil, knowmind.InvalidParam("class", "class must be one of %v", noteClasses)
	}
	if (n.Project == "") != (n.Class == knowmind.ClassUserProfile) {
		return nil, knowmind.InvalidParam("project", "a %s note needs a project, a user profile none", n.Class)
	}
	if n.Project != "" {
		if err := knowmind.ValidProjectHandle(n.Project); err != nil {
			return nil, err
		}
	}
	if path, err := knowmind.CleanNotePath("path", n.Path); err != nil {
		return nil, err
	} else if path != n.Path {
		return nil, knowmind.InvalidParam("path", "path %q is not in its clean form %q", n.Path, path)
	}
	switch r.Status {
	case knowmind.StatusIndexed, knowmind.StatusTrashed:
	default:
		return nil, knowmind.InvalidParam("status", "a note's status is indexed or trashed")
	}
	if (r.Status == knowmind.StatusTrashed) != (n.TrashedAt != nil) {
		return nil, knowmind.InvalidParam("trashed_at", "trashed_at is set exactly for a trashed note")
	}
	if n.Revision < 1 {
		return nil, knowmind.InvalidParam("revision", "revision must be at least 1")
	}
	err := checkTexts(bounded{"id", r.ID, knowmind.MaxIDChars}, bounded{"type", n.Type, knowmind.MaxNoteTypeChars},
		bounded{"frontmatter", n.Frontmatter, knowmind.MaxFrontmatterChars}, bounded{"version", n.Version, knowmind.MaxVersionTokenChars},
		bounded{"owner", n.Owner, knowmind.MaxIDChars}, bounded{"created_by", n.CreatedBy, knowmind.MaxIDChars},
		bounded{"created_via", n.CreatedVia, knowmind.MaxIDChars}, bounded{"updated_by", n.UpdatedBy, knowmind.MaxIDChars},
		bounded{"updated_via", n.UpdatedVia, knowmind.MaxIDChars}, bounded{"actor_kind", n.ActorKind, knowmind.MaxIDChars},
		bounded{"content", r.Content, knowmind.MaxNoteBodyChars})
	if err != nil {
		return nil, err
	}
	if n.Version == "" {
		return nil, knowmind.InvalidParam("version", "a note record needs its version token")
	}
	for _, a := range append(slices.Clone(n.Aliases), n.LinkKeys...) {
		if err := exactText("aliases", a, knowmind.MaxTitleChars); err != nil {
			return nil, err
		}
	}
	title, err := checkText("title", r.Title, knowmind.MaxTitleChars, true)
	if err != nil {
		return nil, err
	}
	content, err := checkContent(r.Content)
	if err != nil {
		return nil, err
	}
	tags, err := checkTags(r.Tags)
	if err != nil {
		return nil, err
	}
	e := newEntry(knowmind.KindNote, title, content)
	e.id, e.tags = r.ID, tags
	if err := e.split(); err != nil {
		return nil, err
	}
	b := &bulkEntry{entry: e, givenID: true, status: r.Status}
	now := time.Now().UTC()
	stamp := func(at *time.Time, def time.Time) time.Time {
		if at == nil || at.IsZero() {
			return def
		}
		return at.UTC()
	}
	created := stamp(r.CreatedAt, now)
	b.createdAt, b.updatedAt = formatTime(created), formatTime(stamp(r.UpdatedAt, created))
	b.validFrom = formatTime(stamp(r.ValidFrom, created))
	if r.ValidTo != nil && !r.ValidTo.IsZero() {
		b.validTo = formatTime(*r.ValidTo)
	}
	return b, nil
}

// writeNotes writes the note records of recs at idx. A note whose id the tenant holds with the
// same title and content is unchanged (otherwise a conflict: nothing is overwritten); a note
// whose title another current note holds in its folder is a conflict; a note naming a project
// the tenant lacks is not found. Written notes are indexed like created ones.
func (t *Tenant) writeNotes(ctx context.Context, recs []knowmind.Record, idx []int, results []knowmind.ItemResult) error {
	var todo []*bulkEntry
	for _, i := range idx {
		b, err := checkNoteRecord(recs[i])
		if err != nil {
			results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, ID: recs[i].ID, Title: recs[i].Title, Err: err}
			continue
		}
		b.index = i
		todo = append(todo, b)
	}
	if len(todo) == 0 {
		return nil
	}
	if err := t.embedEntries(ctx, todo); err != nil {
		t.c.log.Warn("imported notes stored without vectors", "tenant", t.Name, "notes", len(todo), "err", err)
		for _, b := range todo {
			b.vectors = nil // found by full text, as a note written while the embedder fails
		}
	}
	var written []*bulkEntry
	err := runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		written = nil
		var ids, handles []string
		for _, b := range todo {
			ids = append(ids, b.id)
			if p := recs[b.index].Note.Project; p != "" && !slices.Contains(handles, p) {
				handles = append(handles, p)
			}
		}
		var have struct {
			IDs []dgMemory  `json:"ids"`
			P   []dgProject `json:"p"`
		}
		err := queryLists(ctx, txn, []string{
			"ids(func: eq(Memory.id, %s)) { Memory.id Memory.title Memory.content_sha }",
			"p(func: eq(Project.handle, %s)) { uid Project.handle }",
		}, [][]string{ids, handles}, &have)
		if err != nil {
			return err
		}
		stored := map[string]dgMemory{}
		for _, m := range have.IDs {
			stored[m.ID] = m
		}
		projectUID := map[string]string{}
		for _, p := range have.P {
			projectUID[p.Handle] = p.UID
		}
		var nodes []map[string]any
		var keys []string
		for n, b := range todo {
			rec := recs[b.index]
			if m, ok := stored[b.id]; ok {
				results[b.index] = sameOrConflict(b, m.ID, m.ContentSHA, m.Title)
				continue
			}
			stored[b.id] = dgMemory{ID: b.id, Title: b.title, ContentSHA: b.sha}
			nf := rec.Note
			puid := projectUID[nf.Project]
			if nf.Project != "" && puid == "" {
				results[b.index] = knowmind.ItemResult{Status: knowmind.ItemFailed, ID: b.id, Title: b.title,
					Err: &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "project", Message: fmt.Sprintf("project %q not found", nf.Project)}}
				continue
			}
			blank := fmt.Sprintf("n%d", n)
			// A trashed note keeps its chunks, for a restore: written as a current one, then marked.
			status := b.status
			b.status = knowmind.StatusIndexed
			node := b.bulkNode(blank)
			b.status = status
			node["Memory.status"] = status
			node["dgraph.type"] = []string{"Memory", "Note"}
			for k, v := range map[string]any{"Note.path": nf.Path, "Note.class": nf.Class, "Note.type": nf.Type,
				"Note.frontmatter": nf.Frontmatter, "Note.version": nf.Version, "Note.owner": nf.Owner,
				"Note.created_by": nf.CreatedBy, "Note.created_via": nf.CreatedVia, "Note.updated_by": nf.UpdatedBy,
				"Note.updated_via": nf.UpdatedVia, "Note.actor_kind": nf.ActorKind} {
				if s := v.(string); s != "" {
					node[k] = s
				}
			}
			node["Note.revision"] = nf.Revision
			if len(nf.Aliases) > 0 {
				node["Note.aliases"] = nf.Aliases
			}
			if len(nf.LinkKeys) > 0 {
				node["Note.link_keys"] = nf.LinkKeys
			}
			if nf.TrashedAt != nil {
				node["Note.trashed_at"] = formatTime(*nf.TrashedAt)
			}
			if puid != "" {
				node["Note.project"] = map[string]any{"uid": puid}
			}
			if b.status == knowmind.StatusIndexed { // a trashed note released its title
				key := titleKey(nf.Class, nf.Owner, puid, nf.Path, b.title)
				node["Note.title_key"] = key
				keys = append(keys, key)
			}
			results[b.index] = knowmind.ItemResult{Status: knowmind.ItemIndexed, ID: b.id, Title: b.title, ChunksWritten: len(b.chunks)}
			nodes = append(nodes, node)
			written = append(written, b)
		}
		if len(nodes) == 0 {
			return nil
		}
		// A current note of the same title in the same folder (another id) keeps it.
		var dup struct {
			D []struct {
				ID  string `json:"Memory.id"`
				Key string `json:"Note.title_key"`
			} `json:"d"`
		}
		if err := queryLists(ctx, txn, []string{"d(func: eq(Note.title_key, %s)) { Memory.id Note.title_key }"}, [][]string{keys}, &dup); err != nil {
			return err
		}
		taken := map[string]string{}
		for _, d := range dup.D {
			taken[d.Key] = d.ID
		}
		keep := nodes[:0]
		kept := written[:0]
		for i, node := range nodes {
			b := written[i]
			if key, _ := node["Note.title_key"].(string); key != "" {
				if other := taken[key]; other != "" && other != b.id {
					results[b.index] = knowmind.ItemResult{Status: knowmind.ItemFailed, ID: b.id, Title: b.title,
						Err: &knowmind.Error{Code: knowmind.ECONFLICT, Data: map[string]any{"existingId": other},
							Message: fmt.Sprintf("a note titled %q exists in this folder: %s", b.title, other)}}
					continue
				}
				taken[key] = b.id
			}
			keep = append(keep, node)
			kept = append(kept, b)
		}
		written = kept
		if len(keep) == 0 {
			return nil
		}
		body, err := json.Marshal(keep)
		if err != nil {
			return err
		}
		resp, err := txn.Mutate(ctx, &api.Mutation{SetJson: body})
		if err != nil {
			return err
		}
		for n, b := range todo {
			if slices.Contains(written, b) {
				b.committed(fmt.Sprintf("n%d", n), resp.Uids)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("import notes: %w", err)
	}
	var current []*entry
	for _, b := range written {
		if b.status == knowmind.StatusIndexed {
			current = append(current, b.entry)
		}
	}
	t.afterWrite(ctx, current...)
	return nil
}

// checkHistoryRecord validates a revision, forward or visit record.
func checkHistoryRecord(r knowmind.Record) error {
	switch r.Type {
	case knowmind.RecordRevision:
		v := r.Revision
		if v == nil {
			return knowmind.InvalidParam("revision", "a revision record holds its object in revision")
		}
		if v.Note == "" || v.Revision < 1 || v.ValidTo.Before(v.ValidFrom) {
			return knowmind.InvalidParam("revision", "a revision names its note, a revision from 1 and valid_from <= valid_to")
		}
		if path, err := knowmind.CleanNotePath("path", v.Path); err != nil {
			return err
		} else if path != v.Path {
			return knowmind.InvalidParam("path", "path %q is not in its clean form %q", v.Path, path)
		}
		return checkTexts(bounded{"note", v.Note, knowmind.MaxIDChars}, bounded{"version", v.Version, knowmind.MaxVersionTokenChars},
			bounded{"title", v.Title, knowmind.MaxTitleChars}, bounded{"body", v.Body, knowmind.MaxNoteBodyChars},
			bounded{"by", v.By, knowmind.MaxIDChars})
	case knowmind.RecordForward:
		f := r.Forward
		if f == nil {
			return knowmind.InvalidParam("forward", "a forward record holds its object in forward")
		}
		if err := knowmind.ValidProjectHandle(f.Project); err != nil {
			return err
		}
		if f.From == "" || strings.TrimSpace(f.Title) == "" || shapes.ValidName(f.Rel) != nil {
			return knowmind.InvalidParam("forward", "a forward link names its note, a title and a relation type")
		}
		return checkTexts(bounded{"from", f.From, knowmind.MaxIDChars}, bounded{"title", f.Title, knowmind.MaxTitleChars},
			bounded{"rel", f.Rel, knowmind.MaxIDChars})
	default:
		v := r.Visit
		if v == nil {
			return knowmind.InvalidParam("visit", "a visit record holds its object in visit")
		}
		if err := knowmind.ValidProjectHandle(v.Project); err != nil {
			return err
		}
		if v.Principal == "" || strings.ContainsRune(v.Principal, 0) || v.At.IsZero() {
			return knowmind.InvalidParam("principal", "a visit names its principal and time")
		}
		return exactText("principal", v.Principal, knowmind.MaxIDChars)
	}
}

// writeNoteHistory writes the revision, forward and visit records of recs at idx, each unless
// the tenant holds it (a visit the tenant holds takes the record's time).
func (t *Tenant) writeNoteHistory(ctx context.Context, recs []knowmind.Record, idx []int, results []knowmind.ItemResult) error {
	var todo []int
	var noteIDs, handles []string
	for _, i := range idx {
		r := recs[i]
		if err := checkHistoryRecord(r); err != nil {
			results[i] = knowmind.ItemResult{Status: knowmind.ItemFailed, Err: err}
			continue
		}
		todo = append(todo, i)
		switch r.Type {
		case knowmind.RecordRevision:
			noteIDs = append(noteIDs, r.Revision.Note)
		case knowmind.RecordForward:
			noteIDs, handles = append(noteIDs, r.Forward.From), append(handles, r.Forward.Project)
		default:
			handles = append(handles, r.Visit.Project)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	noteIDs, handles = sortedCopy(noteIDs), sortedCopy(handles)
	noteIDs, handles = slices.Compact(noteIDs), slices.Compact(handles)
	return runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		var have struct {
			N []struct {
				UID string `json:"uid"`
				ID  string `json:"Memory.id"`
				R   []struct {
					Revision int `json:"Revision.revision"`
				} `json:"r"`
				F []struct {
					Key string `json:"Forward.key"`
					Rel string `json:"Forward.rel"`
				} `json:"f"`
			} `json:"n"`
			P []dgProject `json:"p"`
		}
		err := queryLists(ctx, txn, []string{
			`n(func: eq(Memory.id, %s)) @filter(eq(Memory.kind, "note")) { uid Memory.id r: ~Revision.note { Revision.revision } f: ~Forward.from { Forward.key Forward.rel } }`,
			"p(func: eq(Project.handle, %s)) { uid Project.handle }",
		}, [][]string{noteIDs, handles}, &have)
		if err != nil {
			return err
		}
		noteUID := map[string]string{}
		held := map[string]bool{} // "r/<id>/<revision>", "f/<id>/<rel>/<key>"
		for _, n := range have.N {
			noteUID[n.ID] = n.UID
			for _, r := range n.R {
				held[fmt.Sprintf("r/%s/%d", n.ID, r.Revision)] = true
			}
			for _, f := range n.F {
				held["f/"+n.ID+"/"+f.Rel+"/"+f.Key] = true
			}
		}
		projectUID := map[string]string{}
		for _, p := range have.P {
			projectUID[p.Handle] = p.UID
		}
		// Visits by key: principal NUL the project's uid in this namespace.
		var visitKeys []string
		for _, i := range todo {
			if v := recs[i].Visit; v != nil && projectUID[v.Project] != "" {
				visitKeys = append(visitKeys, v.Principal+"\x00"+projectUID[v.Project])
			}
		}
		var visits struct {
			V []struct {
				UID string    `json:"uid"`
				Key string    `json:"Visit.key"`
				At  time.Time `json:"Visit.at"`
			} `json:"v"`
		}
		if err := queryLists(ctx, txn, []string{"v(func: eq(Visit.key, %s)) { uid Visit.key Visit.at }"}, [][]string{visitKeys}, &visits); err != nil {
			return err
		}
		visitAt := map[string]struct {
			uid string
			at  time.Time
		}{}
		for _, v := range visits.V {
			visitAt[v.Key] = struct {
				uid string
				at  time.Time
			}{v.UID, v.At}
		}
		notFound := func(param, what string) knowmind.ItemResult {
			return knowmind.ItemResult{Status: knowmind.ItemFailed, Err: &knowmind.Error{Code: knowmind.ENOTFOUND, Param: param,
				Message: fmt.Sprintf("%s not found", what)}}
		}
		var nodes []any
		for n, i := range todo {
			r := recs[i]
			blank := fmt.Sprintf("h%d", n)
			switch r.Type {
			case knowmind.RecordRevision:
				v := r.Revision
				results[i].ID = fmt.Sprintf("%s@%d", v.Note, v.Revision)
				note := noteUID[v.Note]
				if note == "" {
					results[i] = notFound("note", fmt.Sprintf("note %q", v.Note))
					continue
				}
				key := fmt.Sprintf("r/%s/%d", v.Note, v.Revision)
				if held[key] {
					results[i].Status = knowmind.ItemUnchanged
					continue
				}
				held[key] = true
				node := revisionNode(blank, note, dgNote{Revision: v.Revision, Version: v.Version, Title: v.Title,
					Content: v.Body, UpdatedAt: v.ValidFrom, UpdatedBy: v.By, Path: v.Path}, formatTime(v.ValidTo))
				if v.By == "" {
					delete(node, "Revision.by")
				}
				nodes = append(nodes, node)
			case knowmind.RecordForward:
				f := r.Forward
				results[i].ID = f.From + "->" + f.Title
				note, project := noteUID[f.From], projectUID[f.Project]
				if note == "" || project == "" {
					results[i] = notFound("from", fmt.Sprintf("note %q or project %q", f.From, f.Project))
					continue
				}
				key := "f/" + f.From + "/" + f.Rel + "/" + linkKey(f.Title)
				if held[key] {
					results[i].Status = knowmind.ItemUnchanged
					continue
				}
				held[key] = true
				nodes = append(nodes, map[string]any{"uid": "_:" + blank, "dgraph.type": "Forward",
					"Forward.from": map[string]any{"uid": note}, "Forward.project": map[string]any{"uid": project},
					"Forward.key": linkKey(f.Title), "Forward.title": strings.TrimSpace(f.Title), "Forward.rel": f.Rel})
			default:
				v := r.Visit
				results[i].ID = v.Principal + "@" + v.Project
				project := projectUID[v.Project]
				if project == "" {
					results[i] = notFound("project", fmt.Sprintf("project %q", v.Project))
					continue
				}
				key := v.Principal + "\x00" + project
				node := map[string]any{"uid": "_:" + blank, "dgraph.type": "Visit", "Visit.key": key, "Visit.at": formatTime(v.At)}
				if old, ok := visitAt[key]; ok {
					if old.at.Equal(v.At) {
						results[i].Status = knowmind.ItemUnchanged
						continue
					}
					node["uid"] = old.uid
				}
				visitAt[key] = struct {
					uid string
					at  time.Time
				}{node["uid"].(string), v.At}
				nodes = append(nodes, node)
			}
			results[i].Status = knowmind.ItemStored
		}
		if len(nodes) == 0 {
			return nil
		}
		body, err := json.Marshal(nodes)
		if err != nil {
			return err
		}
		_, err = txn.Mutate(ctx, &api.Mutation{SetJson: body})
		return err
	})
}
