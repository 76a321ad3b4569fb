package graph

// Reorganising notes without breaking links (seed 004, docs/notes.md): knowmind_rename_note
// and knowmind_move_note.
//
// A rename changes the note's "# Title" line, keeps the old title as an alias (so [[Old]] keeps
// resolving) and rewrites [[Old]] to [[New]] in every referring note the caller may see — all
// in one transaction whose upsert matches each note only at the version it was read at. Either
// every note is written or none: a referring note that changed meanwhile makes the whole
// transaction match nothing, and the rename is read and tried again (maxRenameAttempts).
// A move changes only the folder: ids, titles and therefore links stay.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/markdown"
)

// MaxRenameReferrers bounds the referring notes one rename rewrites in its transaction.
const MaxRenameReferrers = 200

const maxRenameAttempts = 3

// moveNoteUpsert matches the note at the version the move read, unless its title is taken in
// the target folder.
const moveNoteUpsert = `query q($id: string, $version: string, $key: string) {
  n as var(func: eq(Memory.id, $id)) @filter(eq(Note.version, $version) AND eq(Memory.status, "indexed"))
  d as var(func: eq(Note.title_key, $key)) @filter(NOT uid(n))
  matched(func: uid(n)) { uid }
  dup(func: uid(d)) { Memory.id }
}`

// checkNewTitle refuses a title that cannot be a note's title or a [[link]]'s target.
func checkNewTitle(title string) (string, error) {
	title = strings.TrimSpace(title)
	if title == "" || strings.ContainsAny(title, "\n\r[]|#") {
		return "", knowmind.InvalidParam("title", "title must be one line without [ ] | or #")
	}
	if utf8.RuneCountInString(title) > knowmind.MaxTitleChars {
		return "", knowmind.InvalidParam("title", "title exceeds %d characters", knowmind.MaxTitleChars)
	}
	return title, nil
}

// noteRewrite is one note's new body within a multi-note transaction: var n<i> matches it at
// its read version.
type noteRewrite struct {
	n     dgNote
	title string
	body  string
	e     *entry
}

// RenameNote is knowmind_rename_note.
func (t *Tenant) RenameNote(ctx context.Context, scope knowmind.NoteScope, id, versionToken, newTitle string, actor knowmind.Actor) (knowmind.RenameResult, error) {
	if strings.TrimSpace(versionToken) == "" {
		return knowmind.RenameResult{}, knowmind.InvalidParam("versionToken", "versionToken is required: read it with knowmind_get_note")
	}
	title, err := checkNewTitle(newTitle)
	if err != nil {
		return knowmind.RenameResult{}, err
	}
	for attempt := 1; ; attempt++ {
		res, retry, err := t.renameOnce(ctx, scope, id, versionToken, title, actor)
		if !retry || attempt == maxRenameAttempts {
			if retry {
				return knowmind.RenameResult{}, knowmind.Errorf(knowmind.ECONFLICT, "referring notes kept changing during the rename; nothing was written, try again")
			}
			return res, err
		}
	}
}

// renameOnce reads the note and its referrers and writes all of them in one transaction;
// retry reports that a referring note changed meanwhile (nothing was written).
func (t *Tenant) renameOnce(ctx context.Context, scope knowmind.NoteScope, id, versionToken, title string, actor knowmind.Actor) (knowmind.RenameResult, bool, error) {
	n, err := t.findNote(ctx, scope, id, "")
	if err != nil {
		return knowmind.RenameResult{}, false, err
	}
	if n.Version != versionToken {
		return knowmind.RenameResult{}, false, knowmind.VersionConflict(n.Version)
	}
	if title == n.Title {
		return knowmind.RenameResult{}, false, knowmind.InvalidParam("title", "the note is already titled %q", title)
	}
	rewrites := []noteRewrite{{n: n, title: title, body: markdown.SetTitle(n.Content, title)}}
	if puid := n.projectUID(); puid != "" {
		links, err := t.noteLinks(ctx, n)
		if err != nil {
			return knowmind.RenameResult{}, false, err
		}
		seen := map[string]bool{n.ID: true}
		for _, in := range links.In {
			if in.RelType != WikiRelation || seen[in.ID] {
				continue
			}
			seen[in.ID] = true
			r, err := t.findNote(ctx, scope, in.ID, "")
			if err != nil { // not visible to the caller: its [[Old]] keeps resolving through the alias
				continue
			}
			body, count := markdown.RewriteWikiLinks(r.Content, n.Title, title)
			if count == 0 {
				continue
			}
			if len(rewrites) > MaxRenameReferrers {
				return knowmind.RenameResult{}, false, knowmind.Internal(knowmind.ReasonTooLarge, "more than %d notes link this title; rename in smaller steps", MaxRenameReferrers)
			}
			rewrites = append(rewrites, noteRewrite{n: r, title: r.Title, body: body})
		}
	}

	now := nowString()
	key := titleKey(n.Class, n.Owner, n.projectUID(), n.Path, title)
	var query strings.Builder
	query.WriteString("query q($key: string) {\n")
	vars := map[string]string{"$key": key}
	var conds []string
	var del strings.Builder
	var set []any
	results := make([]knowmind.NoteWriteResult, len(rewrites))
	for i := range rewrites {
		rw := &rewrites[i]
		v := "n" + strconv.Itoa(i)
		fmt.Fprintf(&query, "  %s as var(func: eq(Memory.id, %q)) @filter(eq(Note.version, %q) AND eq(Memory.status, \"indexed\")) { c%d as Memory.chunks }\n  m%d(func: uid(%s)) { uid }\n",
			v, rw.n.ID, rw.n.Version, i, i, v)
		conds = append(conds, "eq(len("+v+"), 1)")
		fmt.Fprintf(&del, "uid(%s) <Memory.chunks> uid(c%d) .\nuid(c%d) * * .\n", v, i, i)
		e, err := t.noteEntry(ctx, rw.n.ID, rw.title, rw.body)
		if err != nil {
			return knowmind.RenameResult{}, false, err
		}
		rw.e = e
		revision := rw.n.Revision + 1
		version := newVersionToken(revision)
		node := map[string]any{
			"uid": "uid(" + v + ")", "Memory.title": rw.title, "Memory.content": rw.body, "Memory.preview": previewOf(rw.body), "Memory.content_sha": rw.e.sha,
			"Memory.lang": rw.e.lang, "Memory.updated_at": now, "Memory.chunks": rw.e.chunkNodes(v),
			"Memory.chunk_count": len(rw.e.chunks), "Note.version": version, "Note.revision": revision,
			"Note.updated_by": actor.Principal, "Note.updated_via": actor.Via, "Note.actor_kind": actorKind(actor),
		}
		if i == 0 {
			keys, aliases := rw.n.LinkKeys, rw.n.Aliases
			if !slices.Contains(keys, linkKey(title)) {
				keys = append(keys, linkKey(title))
			}
			if !slices.Contains(aliases, rw.n.Title) && !strings.EqualFold(title, rw.n.Title) {
				aliases = append(aliases, rw.n.Title)
			}
			node["Note.title_key"], node["Note.link_keys"] = key, keys
			if len(aliases) > 0 {
				node["Note.aliases"] = aliases
			}
		}
		set = append(set, node, revisionNode("rev"+strconv.Itoa(i), "uid("+v+")", rw.n, now))
		results[i] = knowmind.NoteWriteResult{ID: rw.n.ID, Title: rw.title, Project: rw.n.projectHandle(), Path: rw.n.Path,
			Class: rw.n.Class, VersionToken: version, Revision: revision, Links: []string{}, PendingLinks: []string{}}
	}
	query.WriteString("  d as var(func: eq(Note.title_key, $key)) @filter(NOT uid(n0))\n  dup(func: uid(d)) { Memory.id }\n}")
	conds = append(conds, "eq(len(d), 0)")
	setJSON, err := json.Marshal(set)
	if err != nil {
		return knowmind.RenameResult{}, false, err
	}
	var out map[string]json.RawMessage
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out = nil
		resp, err := txn.Do(ctx, &api.Request{Query: query.String(), Vars: vars, Mutations: []*api.Mutation{{
			Cond: "@if(" + strings.Join(conds, " AND ") + ")", DelNquads: []byte(del.String()), SetJson: setJSON}}})
		if err != nil {
			return err
		}
		for i := range rewrites {
			rewrites[i].e.committed("n"+strconv.Itoa(i), resp.Uids)
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return knowmind.RenameResult{}, false, fmt.Errorf("rename note: %w", err)
	}
	if dup := out["dup"]; len(dup) > 2 {
		var d []struct {
			ID string `json:"Memory.id"`
		}
		_ = json.Unmarshal(dup, &d)
		if len(d) > 0 {
			return knowmind.RenameResult{}, false, &knowmind.Error{Code: knowmind.ECONFLICT,
				Message: fmt.Sprintf("a note titled %q exists in this folder: %s", title, d[0].ID), Data: map[string]any{"existingId": d[0].ID}}
		}
	}
	for i := range rewrites {
		if m := out["m"+strconv.Itoa(i)]; len(m) <= 2 { // "[]" or absent: this note changed
			if i == 0 {
				cur, err := t.findNote(ctx, scope, n.ID, "")
				if err != nil {
					return knowmind.RenameResult{}, false, err
				}
				return knowmind.RenameResult{}, false, knowmind.VersionConflict(cur.Version)
			}
			return knowmind.RenameResult{}, true, nil
		}
	}
	res := knowmind.RenameResult{NoteWriteResult: results[0], Rewritten: []string{}}
	entries := make([]*entry, 0, len(rewrites))
	for _, rw := range rewrites {
		entries = append(entries, rw.e)
	}
	res.PMMatches = t.afterWrite(ctx, entries...).pmMatches()
	for i, rw := range rewrites {
		if i > 0 {
			res.Rewritten = append(res.Rewritten, rw.n.ID)
		}
	}
	if puid := n.projectUID(); puid != "" {
		t.resolveForward(ctx, n.ID, puid, []string{title})
	}
	return res, false, nil
}

// MoveNote is knowmind_move_note: the note goes to folder path of its project; id, title and
// links stay.
func (t *Tenant) MoveNote(ctx context.Context, scope knowmind.NoteScope, id, versionToken, path string, actor knowmind.Actor) (knowmind.NoteWriteResult, error) {
	if strings.TrimSpace(versionToken) == "" {
		return knowmind.NoteWriteResult{}, knowmind.InvalidParam("versionToken", "versionToken is required: read it with knowmind_get_note")
	}
	path, err := knowmind.CleanNotePath("path", path)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	n, err := t.findNote(ctx, scope, id, "")
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	if n.Version != versionToken {
		return knowmind.NoteWriteResult{}, knowmind.VersionConflict(n.Version)
	}
	key := titleKey(n.Class, n.Owner, n.projectUID(), path, n.Title)
	revision := n.Revision + 1 // a move is a revision: the former folder is kept (noterevisions.go)
	version := newVersionToken(revision)
	now := nowString()
	set := map[string]any{"uid": "uid(n)", "Note.title_key": key, "Note.version": version, "Note.revision": revision, "Memory.updated_at": now,
		"Note.updated_by": actor.Principal, "Note.updated_via": actor.Via, "Note.actor_kind": actorKind(actor)}
	del := ""
	if path == "" {
		del = "uid(n) <Note.path> * ."
	} else {
		set["Note.path"] = path
	}
	setJSON, _ := json.Marshal([]any{set, revisionNode("rev", "uid(n)", n, now)})
	var out struct {
		Matched []struct{ UID string }
		Dup     []struct {
			ID string `json:"Memory.id"`
		}
	}
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Matched, out.Dup = nil, nil
		mu := &api.Mutation{Cond: `@if(eq(len(n), 1) AND eq(len(d), 0))`, SetJson: setJSON}
		if del != "" {
			mu.DelNquads = []byte(del)
		}
		resp, err := txn.Do(ctx, &api.Request{Query: moveNoteUpsert, Vars: map[string]string{"$id": n.ID, "$version": versionToken, "$key": key},
			Mutations: []*api.Mutation{mu}})
		if err != nil {
			return err
		}
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return knowmind.NoteWriteResult{}, fmt.Errorf("move note: %w", err)
	}
	if len(out.Dup) > 0 {
		return knowmind.NoteWriteResult{}, &knowmind.Error{Code: knowmind.ECONFLICT,
			Message: fmt.Sprintf("a note titled %q exists in that folder: %s", n.Title, out.Dup[0].ID), Data: map[string]any{"existingId": out.Dup[0].ID}}
	}
	if len(out.Matched) == 0 {
		cur, err := t.findNote(ctx, scope, n.ID, "")
		if err != nil {
			return knowmind.NoteWriteResult{}, err
		}
		return knowmind.NoteWriteResult{}, knowmind.VersionConflict(cur.Version)
	}
	return knowmind.NoteWriteResult{ID: n.ID, Title: n.Title, Project: n.projectHandle(), Path: path, Class: n.Class,
		VersionToken: version, Revision: revision, Links: []string{}, PendingLinks: []string{}}, nil
}

// MaxFolderNotes bounds the notes one folder move rewrites in its transaction.
const MaxFolderNotes = 1000

// folderNotesQuery reads the current notes in a folder and below it ($lo..$hi: the paths that
// start with "from/"; "0" follows "/").
var folderNotesQuery = `query q($p: string, $from: string, $lo: string, $hi: string) {
  p(func: uid($p)) {
    n: ~Note.project (first: ` + strconv.Itoa(MaxFolderNotes+1) + `) @filter(eq(Memory.status, "indexed") AND (eq(Note.path, $from) OR (ge(Note.path, $lo) AND lt(Note.path, $hi)))) {
      ` + noteFields + `
    }
  }
}`

// MoveFolder is knowmind_move_folder (and knowmind_rename_folder): every note the caller may see
// in folder from and below it moves to the same place under to, in one transaction; ids, titles
// and links stay. A title taken at the target is 409 and nothing moves.
func (t *Tenant) MoveFolder(ctx context.Context, scope knowmind.NoteScope, project, from, to string, actor knowmind.Actor) (knowmind.MoveFolderResult, error) {
	from, err := knowmind.CleanNotePath("from", from)
	if err != nil {
		return knowmind.MoveFolderResult{}, err
	}
	if from == "" {
		return knowmind.MoveFolderResult{}, knowmind.InvalidParam("from", "from must name a folder (the root cannot move)")
	}
	if to, err = knowmind.CleanNotePath("to", to); err != nil {
		return knowmind.MoveFolderResult{}, err
	}
	if to == from || strings.HasPrefix(to, from+"/") {
		return knowmind.MoveFolderResult{}, knowmind.InvalidParam("to", "to must not be %q or inside it", from)
	}
	puid, err := t.project(ctx, scope, project)
	if err != nil {
		return knowmind.MoveFolderResult{}, err
	}
	for attempt := 1; ; attempt++ {
		res, retry, err := t.moveFolderOnce(ctx, scope, puid, from, to, actor)
		if !retry {
			res.Project = project
			return res, err
		}
		if attempt == maxRenameAttempts {
			return knowmind.MoveFolderResult{}, knowmind.Errorf(knowmind.ECONFLICT, "notes in %q kept changing during the move; nothing moved, try again", from)
		}
	}
}

func (t *Tenant) moveFolderOnce(ctx context.Context, scope knowmind.NoteScope, puid, from, to string, actor knowmind.Actor) (knowmind.MoveFolderResult, bool, error) {
	var out struct {
		P []struct {
			N []dgNote `json:"n"`
		}
	}
	if err := t.queryVars(ctx, folderNotesQuery, map[string]string{"$p": puid, "$from": from, "$lo": from + "/", "$hi": from + "0"}, &out); err != nil {
		return knowmind.MoveFolderResult{}, false, fmt.Errorf("move folder: %w", err)
	}
	var notes []dgNote
	if len(out.P) > 0 {
		for _, n := range out.P[0].N {
			if n.visible(scope) {
				notes = append(notes, n)
			}
		}
	}
	res := knowmind.MoveFolderResult{From: from, To: to, IDs: []string{}}
	if len(notes) == 0 {
		return res, false, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "from", Message: fmt.Sprintf("folder %q holds no notes", from)}
	}
	if len(notes) > MaxFolderNotes {
		return res, false, knowmind.Internal(knowmind.ReasonTooLarge, "more than %d notes in %q; move its subfolders one by one", MaxFolderNotes, from)
	}
	now := nowString()
	var query strings.Builder
	query.WriteString("{\n")
	var conds, keys, vs []string
	var set []any
	var del strings.Builder
	for i, n := range notes {
		v := "n" + strconv.Itoa(i)
		vs = append(vs, v)
		fmt.Fprintf(&query, "  %s as var(func: uid(%s)) @filter(eq(Note.version, %q) AND eq(Memory.status, \"indexed\"))\n  m%d(func: uid(%s)) { uid }\n",
			v, n.UID, n.Version, i, v)
		conds = append(conds, "eq(len("+v+"), 1)")
		path := to + strings.TrimPrefix(n.Path, from)
		path = strings.TrimPrefix(path, "/")
		if _, err := knowmind.CleanNotePath("to", path); err != nil {
			return res, false, err // the moved tree would be too deep or too long there
		}
		key := titleKey(n.Class, n.Owner, puid, path, n.Title)
		keys = append(keys, strconv.Quote(key))
		node := map[string]any{"uid": "uid(" + v + ")", "Note.title_key": key, "Note.revision": n.Revision + 1,
			"Note.version": newVersionToken(n.Revision + 1), "Memory.updated_at": now, "Note.updated_by": actor.Principal,
			"Note.updated_via": actor.Via, "Note.actor_kind": actorKind(actor)}
		if path == "" {
			fmt.Fprintf(&del, "uid(%s) <Note.path> * .\n", v)
		} else {
			node["Note.path"] = path
		}
		set = append(set, node, revisionNode("rev"+strconv.Itoa(i), "uid("+v+")", n, now))
		res.IDs = append(res.IDs, n.ID)
	}
	fmt.Fprintf(&query, "  d as var(func: eq(Note.title_key, [%s])) @filter(NOT uid(%s))\n  dup(func: uid(d)) { Memory.id Memory.title }\n}",
		strings.Join(keys, ", "), strings.Join(vs, ", "))
	conds = append(conds, "eq(len(d), 0)")
	setJSON, err := json.Marshal(set)
	if err != nil {
		return res, false, err
	}
	var resp map[string]json.RawMessage
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp = nil
		mu := &api.Mutation{Cond: "@if(" + strings.Join(conds, " AND ") + ")", SetJson: setJSON}
		if del.Len() > 0 {
			mu.DelNquads = []byte(del.String())
		}
		r, err := txn.Do(ctx, &api.Request{Query: query.String(), Mutations: []*api.Mutation{mu}})
		if err != nil {
			return err
		}
		return json.Unmarshal(r.Json, &resp)
	})
	if err != nil {
		return res, false, fmt.Errorf("move folder: %w", err)
	}
	var dup []struct {
		ID    string `json:"Memory.id"`
		Title string `json:"Memory.title"`
	}
	if raw := resp["dup"]; len(raw) > 2 {
		_ = json.Unmarshal(raw, &dup)
	}
	if len(dup) > 0 {
		return res, false, &knowmind.Error{Code: knowmind.ECONFLICT,
			Message: fmt.Sprintf("a note titled %q exists at the target: %s; nothing moved", dup[0].Title, dup[0].ID),
			Data:    map[string]any{"existingId": dup[0].ID}}
	}
	for i := range notes {
		if m := resp["m"+strconv.Itoa(i)]; len(m) <= 2 {
			return res, true, nil
		}
	}
	res.Moved = len(notes)
	return res, false, nil
}
