package graph

// Notes (seed 004, docs/notes.md): create, get, edit with version tokens, trash, revisions.
//
// A note is a Memory node of kind "note", so recall, relations and the BM25/vector statistics
// treat it as any memory: its body is chunked and embedded by the ingest code, its chunks are
// indexed (textindex.go) after each committed write and forgotten when it goes to the trash.
// The note's own predicates (Note.*) say where it lives and who wrote it.
//
// # Version tokens (CAS)
//
// Note.version changes with every write. An edit names the token it read; its upsert matches
// the note only while Note.version still holds that token, and writes the new one. Two edits
// with the same token both write Note.version of the same node (and its @upsert index key), so
// Dgraph aborts one; runTxn retries it, the retry's query no longer matches and it reports
// versionConflict with the current token. Of N concurrent edits with one token exactly one wins.
//
// # Titles
//
// Note.title_key (hash of project or owner, folder and lower-cased title) is @upsert and unique
// among notes not in the trash: a second note with the same title in the same folder is 409.
// Note.link_keys (lower-cased title and former titles) resolve [[wiki links]] within a project.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"gopkg.in/yaml.v3"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/markdown"
)

// noteFields are what GetNote reads of a note.
const noteFields = `uid Memory.id Memory.kind Memory.title Memory.content Memory.tags Memory.status
    Memory.created_at Memory.updated_at Memory.lang
    Note.path Note.class Note.type Note.frontmatter Note.version Note.revision Note.aliases Note.owner
    Note.created_by Note.created_via Note.updated_by Note.updated_via Note.actor_kind Note.trashed_at
    Note.title_key Note.link_keys
    Note.project { uid Project.handle Project.aliases }`

const getNoteQuery = `query q($id: string) {
  n(func: eq(Memory.id, $id), first: 1) @filter(eq(Memory.kind, "note")) { ` + noteFields + ` }
}`

// noteByTitleQuery finds current notes by title (or former title) in one project.
const noteByTitleQuery = `query q($key: string, $project: string) {
  n(func: eq(Note.link_keys, $key), first: 5) @filter(eq(Memory.status, "indexed") AND uid_in(Note.project, $project)) { ` + noteFields + ` }
}`

// createNoteUpsert writes the note unless a current note has its title key.
const createNoteUpsert = `query q($key: string) {
  d as var(func: eq(Note.title_key, $key))
  dup(func: uid(d)) { Memory.id }
}`

// editNoteUpsert matches the note only at the version the edit read (and, when the title
// changes, only if no other note holds the new title key); c are the chunks it replaces.
const editNoteUpsert = `query q($id: string, $version: string, $key: string) {
  n as var(func: eq(Memory.id, $id)) @filter(eq(Note.version, $version) AND eq(Memory.status, "indexed")) {
    c as Memory.chunks
  }
  d as var(func: eq(Note.title_key, $key)) @filter(NOT uid(n))
  matched(func: uid(n)) { uid }
  dup(func: uid(d)) { Memory.id }
}`

// revisionsQuery lists a note's newest knowmind.MaxRevisionsReturned former bodies.
var revisionsQuery = `query q($id: string) {
  n(func: eq(Memory.id, $id), first: 1) {
    r: ~Revision.note (orderdesc: Revision.revision, first: ` + strconv.Itoa(knowmind.MaxRevisionsReturned) + `) {
      Revision.revision Revision.version Revision.title Revision.body Revision.valid_from Revision.valid_to Revision.by
    }
  }
}`

// dgNote is a note as DQL returns it.
type dgNote struct {
	UID         string     `json:"uid"`
	ID          string     `json:"Memory.id"`
	Kind        string     `json:"Memory.kind"`
	Title       string     `json:"Memory.title"`
	Content     string     `json:"Memory.content"`
	Preview     string     `json:"Memory.preview"`
	Tags        []string   `json:"Memory.tags"`
	Status      string     `json:"Memory.status"`
	Lang        string     `json:"Memory.lang"`
	CreatedAt   time.Time  `json:"Memory.created_at"`
	UpdatedAt   time.Time  `json:"Memory.updated_at"`
	Path        string     `json:"Note.path"`
	Class       string     `json:"Note.class"`
	Type        string     `json:"Note.type"`
	Frontmatter string     `json:"Note.frontmatter"`
	Version     string     `json:"Note.version"`
	Revision    int        `json:"Note.revision"`
	Aliases     []string   `json:"Note.aliases"`
	Owner       string     `json:"Note.owner"`
	CreatedBy   string     `json:"Note.created_by"`
	CreatedVia  string     `json:"Note.created_via"`
	UpdatedBy   string     `json:"Note.updated_by"`
	UpdatedVia  string     `json:"Note.updated_via"`
	ActorKind   string     `json:"Note.actor_kind"`
	TrashedAt   *time.Time `json:"Note.trashed_at"`
	TitleKey    string     `json:"Note.title_key"`
	LinkKeys    []string   `json:"Note.link_keys"`
	Project     *struct {
		UID     string   `json:"uid"`
		Handle  string   `json:"Project.handle"`
		Aliases []string `json:"Project.aliases"`
	} `json:"Note.project"`
	// Since: the newest revision's end, where a query read noteSinceField (bodySince);
	// NewestRevisionEnd the same where it read recallNoteSinceField.
	Since []struct {
		ValidTo time.Time `json:"Revision.valid_to"`
	} `json:"since"`
	NewestRevisionEnd *time.Time `json:"newest_revision_end"`
}

func (n dgNote) projectHandle() string {
	if n.Project == nil {
		return ""
	}
	return n.Project.Handle
}

func (n dgNote) projectUID() string {
	if n.Project == nil {
		return ""
	}
	return n.Project.UID
}

// visible says whether scope may see the note: shared notes of its projects, its own private
// memory (of its projects, or without project), and none without the notes toolset.
func (n dgNote) visible(scope knowmind.NoteScope) bool {
	if !scope.ReachesNotes() {
		return false
	}
	if n.Class != knowmind.ClassUserDoc && n.Owner != scope.Principal {
		return false
	}
	return n.Project == nil || projectAllowed(scope, n.Project.Handle, n.Project.Aliases)
}

func (n dgNote) domain() knowmind.Note {
	fm := map[string]any{}
	if n.Frontmatter != "" {
		_ = yaml.Unmarshal([]byte(n.Frontmatter), &fm)
	}
	actor := n.ActorKind
	if actor == "" {
		actor = "agent"
	}
	return knowmind.Note{
		ID: n.ID, Project: n.projectHandle(), Path: n.Path, Title: n.Title, Content: n.Content,
		Frontmatter: fm, Type: n.Type, Tags: nonNil(n.Tags), Class: n.Class, Status: n.Status,
		VersionToken: n.Version, Revision: n.Revision, Aliases: nonNil(n.Aliases),
		Provenance: knowmind.Provenance{CreatedBy: n.CreatedBy, CreatedVia: n.CreatedVia, CreatedAt: n.CreatedAt,
			UpdatedBy: n.UpdatedBy, UpdatedVia: n.UpdatedVia, UpdatedAt: n.UpdatedAt, ActorKind: actor},
	}
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// newVersionToken is "<revision>-<16 hex>": the revision for people reading it, the random part
// so that a token never repeats (a restored revision number gets a new token).
func newVersionToken(revision int) string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return strconv.Itoa(revision) + "-" + hex.EncodeToString(b)
}

// titleKey is the uniqueness key of a note's title: shared notes per project and folder,
// private ones per owner, class, project and folder.
func titleKey(class, owner, projectUID, path, title string) string {
	h := sha256.New()
	if class == knowmind.ClassUserDoc {
		owner = ""
	}
	fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s", class, owner, projectUID, path, strings.ToLower(title))
	return hex.EncodeToString(h.Sum(nil))
}

func linkKey(title string) string { return strings.ToLower(strings.TrimSpace(title)) }

// parseBody checks a note body (size, frontmatter, leading H1) and returns its parts.
func parseBody(param, text string) (fm map[string]any, body, title string, err error) {
	if len(text) > knowmind.MaxNoteBodyChars && utf8.RuneCountInString(text) > knowmind.MaxNoteBodyChars {
		return nil, "", "", knowmind.Internal(knowmind.ReasonTooLarge, "%s exceeds %d characters", param, knowmind.MaxNoteBodyChars)
	}
	fm, body, err = markdown.Split(text)
	if err != nil {
		return nil, "", "", err
	}
	if err := checkFrontmatter(param, fm); err != nil {
		return nil, "", "", err
	}
	body = strings.TrimSpace(body)
	title = markdown.Title(body)
	if title == "" {
		return nil, "", "", knowmind.InvalidParam(param, "%s must start with a \"# Title\" line: it names the note", param)
	}
	if utf8.RuneCountInString(title) > knowmind.MaxTitleChars {
		return nil, "", "", knowmind.InvalidParam(param, "the title exceeds %d characters", knowmind.MaxTitleChars)
	}
	return fm, body, title, nil
}

// checkFrontmatter bounds a note's properties: how many keys and how long their YAML is, so
// get_note, explore and an export stay page-sized whatever a vault holds.
func checkFrontmatter(param string, fm map[string]any) error {
	if len(fm) > knowmind.MaxFrontmatterKeys {
		return knowmind.InvalidParam(param, "the frontmatter has %d keys; at most %d", len(fm), knowmind.MaxFrontmatterKeys)
	}
	if len(fm) == 0 {
		return nil
	}
	b, err := yaml.Marshal(fm)
	if err != nil {
		return knowmind.InvalidParam(param, "the frontmatter cannot be stored as YAML: %v", err)
	}
	if n := utf8.RuneCount(b); n > knowmind.MaxFrontmatterChars {
		return knowmind.InvalidParam(param, "the frontmatter is %d characters as YAML; at most %d", n, knowmind.MaxFrontmatterChars)
	}
	return nil
}

// noteEntry chunks and embeds a note body. An embedder failure leaves the chunks without
// vectors (found by full text only) rather than refusing the write.
// A body whose chunks would pass the bounds of entry.split is too_large.
func (t *Tenant) noteEntry(ctx context.Context, id, title, body string) (*entry, error) {
	e := newEntry(knowmind.KindNote, title, body)
	if id != "" {
		e.id = id
	}
	if err := e.split(); err != nil {
		return nil, err
	}
	if err := t.embed(ctx, e); err != nil {
		t.c.log.Warn("note stored without vectors", "tenant", t.Name, "id", e.id, "err", err)
		e.vectors = nil
	}
	return e, nil
}

// CreateNote writes a new note (see knowmind.CreateNoteInput) and resolves its links.
func (t *Tenant) CreateNote(ctx context.Context, scope knowmind.NoteScope, in knowmind.CreateNoteInput) (knowmind.NoteWriteResult, error) {
	var projectUID, projectHandle string
	if in.Project != "" || in.Class == knowmind.ClassUserDoc {
		p, err := t.projectRef(ctx, scope, in.Project)
		if err != nil {
			return knowmind.NoteWriteResult{}, err
		}
		projectUID, projectHandle = p.UID, p.Handle
	}
	fm, body, title, err := parseBody("body", in.Body)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	path, err := knowmind.CleanNotePath("path", in.Path)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	noteType, tags := in.Type, in.Tags
	if noteType == "" {
		noteType, _ = fm["type"].(string)
	}
	if tags == nil {
		if list, ok := fm["tags"].([]any); ok {
			for _, v := range list {
				tags = append(tags, fmt.Sprint(v))
			}
		}
	}
	if tags, err = checkTags(tags); err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	if noteType, err = checkText("type", noteType, knowmind.MaxTagChars, false); err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	if len(in.Links) > knowmind.MaxNoteLinks {
		return knowmind.NoteWriteResult{}, knowmind.InvalidParam("links", "at most %d links", knowmind.MaxNoteLinks)
	}
	for _, l := range in.Links {
		if err := t.checkLinkSpec(l); err != nil {
			return knowmind.NoteWriteResult{}, err
		}
	}
	var fmText string
	if len(fm) > 0 {
		b, _ := yaml.Marshal(fm)
		fmText = string(b)
	}

	e, err := t.noteEntry(ctx, "", title, body)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	e.tags = tags
	key := titleKey(in.Class, in.Owner, projectUID, path, title)
	version := newVersionToken(1)
	now := nowString()
	node := e.node("n", now, knowmind.StatusIndexed, "")
	node["dgraph.type"] = []string{"Memory", "Note"}
	for k, v := range map[string]any{
		"Note.path": path, "Note.class": in.Class, "Note.type": noteType, "Note.frontmatter": fmText,
		"Note.version": version, "Note.revision": 1, "Note.title_key": key, "Note.link_keys": []string{linkKey(title)},
		"Note.owner": privateOwner(in.Class, in.Owner), "Note.created_by": in.Actor.Principal, "Note.created_via": in.Actor.Via,
		"Note.updated_by": in.Actor.Principal, "Note.updated_via": in.Actor.Via, "Note.actor_kind": actorKind(in.Actor),
	} {
		if s, ok := v.(string); ok && s == "" {
			continue
		}
		node[k] = v
	}
	if projectUID != "" {
		node["Note.project"] = map[string]any{"uid": projectUID}
	}
	body2, err := json.Marshal(node)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	var out struct {
		Dup []struct {
			ID string `json:"Memory.id"`
		}
	}
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Dup = nil
		resp, err := txn.Do(ctx, &api.Request{Query: createNoteUpsert, Vars: map[string]string{"$key": key},
			Mutations: []*api.Mutation{{Cond: `@if(eq(len(d), 0))`, SetJson: body2}}})
		if err != nil {
			return err
		}
		e.committed("n", resp.Uids)
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		return nil
	})
	if err != nil {
		return knowmind.NoteWriteResult{}, fmt.Errorf("create note: %w", err)
	}
	if len(out.Dup) > 0 {
		return knowmind.NoteWriteResult{}, &knowmind.Error{Code: knowmind.ECONFLICT,
			Message: fmt.Sprintf("a note titled %q exists in this folder: %s", title, out.Dup[0].ID),
			Data:    map[string]any{"existingId": out.Dup[0].ID}}
	}
	aw := t.afterWrite(ctx, e)
	res := knowmind.NoteWriteResult{ID: e.id, Title: title, Path: path, Class: in.Class, VersionToken: version, Revision: 1,
		Links: []string{}, PendingLinks: []string{}, PMMatches: aw.pmMatches()}
	if projectUID != "" {
		res.Project = projectHandle
		wiki, truncated := wikiSpecs(body)
		res.LinksTruncated = truncated
		t.applyLinks(ctx, e.id, projectUID, append(slices.Clone(in.Links), wiki...), &res)
		t.resolveForward(ctx, e.id, projectUID, []string{title})
	}
	return res, nil
}

// privateOwner is the owner a note records: its principal for private memory, none for shared notes.
func privateOwner(class, owner string) string {
	if class == knowmind.ClassUserDoc {
		return ""
	}
	return owner
}

func actorKind(a knowmind.Actor) string {
	if a.Human {
		return "human"
	}
	return "agent"
}

// GetNote reads a visible note by id, or by title ("[[Title]]" or the bare title) in project.
// Notes in the trash and notes outside the scope are 404: a caller cannot tell them from none.
func (t *Tenant) GetNote(ctx context.Context, scope knowmind.NoteScope, ref, project string, detailed bool) (knowmind.Note, error) {
	n, err := t.findNote(ctx, scope, ref, project)
	if err != nil {
		return knowmind.Note{}, err
	}
	note := n.domain()
	if detailed {
		note.Outline = markdown.Outline(n.Content)
		links, err := t.noteLinks(ctx, n)
		if err != nil {
			return knowmind.Note{}, err
		}
		note.Links = &links
	}
	return note, nil
}

// findNote resolves a reference the caller gave to a visible, current note.
func (t *Tenant) findNote(ctx context.Context, scope knowmind.NoteScope, ref, project string) (dgNote, error) {
	ref = strings.TrimSpace(ref)
	notFound := &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "id", Message: fmt.Sprintf("note %q not found", runes.Truncate(ref, 80))}
	if ref == "" {
		return dgNote{}, knowmind.InvalidParam("id", "id is required")
	}
	if err := checkIDLength("id", ref); err != nil {
		return dgNote{}, err
	}
	var out struct{ N []dgNote }
	if title, ok := strings.CutPrefix(ref, "[["); ok {
		title, _, _ = strings.Cut(strings.TrimSuffix(title, "]]"), "|")
		if project == "" {
			project = knowmind.DefaultProject
		}
		puid, err := t.project(ctx, scope, project)
		if err != nil {
			return dgNote{}, err
		}
		if err := t.queryVars(ctx, noteByTitleQuery, map[string]string{"$key": linkKey(title), "$project": puid}, &out); err != nil {
			return dgNote{}, fmt.Errorf("get note: %w", err)
		}
		out.N = slices.DeleteFunc(out.N, func(n dgNote) bool { return !n.visible(scope) })
		if len(out.N) > 1 {
			ids := make([]string, len(out.N))
			for i, n := range out.N {
				ids[i] = n.ID + " (" + n.Path + ")"
			}
			return dgNote{}, &knowmind.Error{Code: knowmind.ECONFLICT, Message: "several notes are titled so: " + strings.Join(ids, ", ") + "; use the id",
				Data: map[string]any{"ids": ids}}
		}
	} else if err := t.queryVars(ctx, getNoteQuery, map[string]string{"$id": ref}, &out); err != nil {
		return dgNote{}, fmt.Errorf("get note: %w", err)
	}
	if len(out.N) == 0 || out.N[0].Status != knowmind.StatusIndexed || !out.N[0].visible(scope) {
		return dgNote{}, notFound
	}
	return out.N[0], nil
}

// EditNote applies one edit operation at the caller's version token (see "Version tokens").
// The former body is kept as a Revision; new wiki links become edges or forward references, and
// the edges of wiki links the edit removed are closed (closeDroppedLinks).
func (t *Tenant) EditNote(ctx context.Context, scope knowmind.NoteScope, in knowmind.EditNoteInput) (knowmind.NoteWriteResult, error) {
	if strings.TrimSpace(in.VersionToken) == "" {
		return knowmind.NoteWriteResult{}, knowmind.InvalidParam("versionToken", "versionToken is required: read it with knowmind_get_note")
	}
	n, err := t.findNote(ctx, scope, in.ID, "")
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	if n.Version != in.VersionToken {
		return knowmind.NoteWriteResult{}, knowmind.VersionConflict(n.Version)
	}
	text, err := markdown.Edit(n.Content, in.Op, in.Content, in.Heading, in.Find)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	fm, body, title, err := parseBody("content", text)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	e, err := t.noteEntry(ctx, n.ID, title, body)
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	revision := n.Revision + 1
	version := newVersionToken(revision)
	now := nowString()
	key := n.TitleKey
	keys := n.LinkKeys
	aliases := n.Aliases
	if title != n.Title {
		key = titleKey(n.Class, n.Owner, n.projectUID(), n.Path, title)
		if !slices.Contains(keys, linkKey(title)) {
			keys = append(keys, linkKey(title))
		}
		if !slices.Contains(aliases, n.Title) && !strings.EqualFold(title, n.Title) {
			aliases = append(aliases, n.Title)
		}
	}
	set := map[string]any{
		"uid": "uid(n)", "Memory.title": title, "Memory.content": body, "Memory.preview": previewOf(body), "Memory.content_sha": e.sha,
		"Memory.lang": e.lang, "Memory.updated_at": now, "Memory.chunks": e.chunkNodes("n"),
		"Memory.chunk_count": len(e.chunks), "Note.version": version, "Note.revision": revision,
		"Note.title_key": key, "Note.link_keys": keys, "Note.updated_by": in.Actor.Principal,
		"Note.updated_via": in.Actor.Via, "Note.actor_kind": actorKind(in.Actor),
	}
	if len(aliases) > 0 {
		set["Note.aliases"] = aliases
	}
	delTags := ""
	if fm != nil { // a replace that brings frontmatter replaces the note's
		b, _ := yaml.Marshal(fm)
		set["Note.frontmatter"] = string(b)
		if noteType, ok := fm["type"].(string); ok {
			set["Note.type"] = noteType
		}
		// Its tags: list follows, as on create (a vault sync edits tags in the front matter).
		if list, ok := fm["tags"].([]any); ok {
			var tags []string
			for _, v := range list {
				tags = append(tags, fmt.Sprint(v))
			}
			if tags, err = checkTags(tags); err != nil {
				return knowmind.NoteWriteResult{}, err
			}
			e.tags = tags // event goals match the edit's tags
			delTags = "uid(n) <Memory.tags> * .\n"
			if len(tags) > 0 {
				set["Memory.tags"] = tags
			}
		}
	}
	rev := revisionNode("rev", "uid(n)", n, now)
	setJSON, err := json.Marshal([]any{set, rev})
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	var out struct {
		Matched []struct{ UID string }
		Dup     []struct {
			ID string `json:"Memory.id"`
		}
	}
	err = runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		out.Matched, out.Dup = nil, nil
		resp, err := txn.Do(ctx, &api.Request{
			Query: editNoteUpsert,
			Vars:  map[string]string{"$id": n.ID, "$version": in.VersionToken, "$key": key},
			Mutations: []*api.Mutation{{
				Cond:      `@if(eq(len(n), 1) AND eq(len(d), 0))`,
				DelNquads: []byte("uid(n) <Memory.chunks> uid(c) .\nuid(c) * * .\n" + delTags),
				SetJson:   setJSON,
			}},
		})
		if err != nil {
			return err
		}
		e.committed("n", resp.Uids)
		return json.Unmarshal(resp.Json, &out)
	})
	if err != nil {
		return knowmind.NoteWriteResult{}, fmt.Errorf("edit note: %w", err)
	}
	if len(out.Matched) == 0 {
		cur, err := t.findNote(ctx, scope, n.ID, "")
		if err != nil {
			return knowmind.NoteWriteResult{}, err
		}
		return knowmind.NoteWriteResult{}, knowmind.VersionConflict(cur.Version)
	}
	if len(out.Dup) > 0 {
		return knowmind.NoteWriteResult{}, &knowmind.Error{Code: knowmind.ECONFLICT,
			Message: fmt.Sprintf("a note titled %q exists in this folder: %s", title, out.Dup[0].ID),
			Data:    map[string]any{"existingId": out.Dup[0].ID}}
	}
	aw := t.afterWrite(ctx, e)
	res := knowmind.NoteWriteResult{ID: n.ID, Title: title, Project: n.projectHandle(), Path: n.Path, Class: n.Class,
		VersionToken: version, Revision: revision, Links: []string{}, PendingLinks: []string{}, PMMatches: aw.pmMatches()}
	if puid := n.projectUID(); puid != "" {
		wiki, truncated := wikiSpecs(body)
		res.LinksTruncated = truncated
		t.applyLinks(ctx, n.ID, puid, wiki, &res)
		res.Unlinked = t.closeDroppedLinks(ctx, n.ID, puid, n.Content, body)
		if title != n.Title {
			t.resolveForward(ctx, n.ID, puid, []string{title})
		}
	}
	return res, nil
}

// Revisions lists a visible note's former bodies, newest first (at most
// knowmind.MaxRevisionsReturned).
func (t *Tenant) Revisions(ctx context.Context, scope knowmind.NoteScope, id string) ([]knowmind.Revision, error) {
	n, err := t.findNote(ctx, scope, id, "")
	if err != nil {
		return nil, err
	}
	var out struct {
		N []struct {
			R []struct {
				Revision  int        `json:"Revision.revision"`
				Version   string     `json:"Revision.version"`
				Title     string     `json:"Revision.title"`
				Body      string     `json:"Revision.body"`
				ValidFrom time.Time  `json:"Revision.valid_from"`
				ValidTo   *time.Time `json:"Revision.valid_to"`
				By        string     `json:"Revision.by"`
			} `json:"r"`
		}
	}
	if err := t.queryVars(ctx, revisionsQuery, map[string]string{"$id": n.ID}, &out); err != nil {
		return nil, fmt.Errorf("revisions: %w", err)
	}
	revs := []knowmind.Revision{}
	if len(out.N) > 0 {
		for _, r := range out.N[0].R {
			revs = append(revs, knowmind.Revision{Revision: r.Revision, VersionToken: r.Version, Title: r.Title,
				Content: r.Body, ValidFrom: r.ValidFrom, ValidTo: r.ValidTo, By: r.By})
		}
	}
	return revs, nil
}
