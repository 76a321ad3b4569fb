package graph

// Links between notes: [[wiki links]] in a body and knowmind_link's note targets become typed
// relation edges (REFERENCES by default) through Tenant.Link, so they are the same edges recall
// hops over. A link to a title no note of the project has yet waits as a Forward node and is
// resolved when a note of that title is created (or renamed to it). Links never cross projects.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/internal/runes"
	"github.com/knowmind/knowmind/markdown"
	"github.com/knowmind/knowmind/shapes"
)

// WikiRelation is the relation a [[wiki link]] becomes: the default shapes' REFERENCES ("the source
// cites or points to the target"), so wiki links need no relation type of their own.
const WikiRelation = "REFERENCES"

// forwardQuery finds the links waiting for one of these titles in a project.
const forwardQuery = `query q($key: string, $project: string) {
  f(func: eq(Forward.key, $key)) @filter(uid_in(Forward.project, $project)) {
    uid Forward.rel Forward.title
    Forward.from @filter(eq(Memory.status, "indexed")) { Memory.id }
  }
}`

// pendingQuery lists a note's own forward references.
const pendingQuery = `query q($id: string) {
  n(func: eq(Memory.id, $id), first: 1) {
    uid
    f: ~Forward.from { uid Forward.rel Forward.title Forward.key }
  }
}`

// wikiSpecs are the links of a body's [[titles]], the first MaxWikiLinksPerNote of them, and
// how many past those were left out.
func wikiSpecs(body string) (specs []knowmind.LinkSpec, truncated int) {
	titles := markdown.WikiLinks(body)
	if len(titles) > knowmind.MaxWikiLinksPerNote {
		truncated = len(titles) - knowmind.MaxWikiLinksPerNote
		titles = titles[:knowmind.MaxWikiLinksPerNote]
	}
	specs = make([]knowmind.LinkSpec, len(titles))
	for i, title := range titles {
		specs[i] = knowmind.LinkSpec{RelType: WikiRelation, ToTitle: title}
	}
	return specs, truncated
}

// checkLinkSpec refuses a malformed link before anything is written.
func (t *Tenant) checkLinkSpec(l knowmind.LinkSpec) error {
	rel := l.RelType
	if rel == "" {
		rel = WikiRelation
	}
	if err := shapes.ValidName(rel); err != nil {
		return err
	}
	if _, ok := t.c.cfg.Shapes.Relation(rel); !ok {
		return t.c.cfg.Shapes.Check(rel, nil, nil, 0)
	}
	if (l.To == "") == (l.ToTitle == "") {
		return knowmind.InvalidParam("links", "links: each link needs exactly one of to (a note id) and toTitle (a title)")
	}
	if err := checkIDLength("links", l.To); err != nil {
		return err
	}
	if len([]rune(l.ToTitle)) > knowmind.MaxTitleChars {
		return knowmind.InvalidParam("links", "toTitle exceeds %d characters", knowmind.MaxTitleChars)
	}
	return nil
}

// LinkNote is knowmind_link for a note source: to a note id of the same project, or to a
// title (resolved now, or kept as a forward reference). It reports whether the link is pending.
func (t *Tenant) LinkNote(ctx context.Context, scope knowmind.NoteScope, fromID string, l knowmind.LinkSpec) (knowmind.NoteWriteResult, error) {
	if err := t.checkLinkSpec(l); err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	n, err := t.findNote(ctx, scope, fromID, "")
	if err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	puid := n.projectUID()
	if puid == "" {
		return knowmind.NoteWriteResult{}, knowmind.InvalidParam("from", "private notes without a project take no links")
	}
	res := knowmind.NoteWriteResult{ID: n.ID, Title: n.Title, Project: n.projectHandle(), Path: n.Path, Class: n.Class,
		VersionToken: n.Version, Revision: n.Revision, Links: []string{}, PendingLinks: []string{}}
	if err := t.linkOne(ctx, n.ID, puid, l, &res); err != nil {
		return knowmind.NoteWriteResult{}, err
	}
	return res, nil
}

// LinkTitle is knowmind_link with to_title instead of to_id: fromID must be a note the caller
// sees, in a project; the title resolves among that project's notes the caller sees (titles and
// aliases, case-insensitive) and is linked like to_id, or, when no note has it yet, waits as a
// forward reference (Pending). Several notes of that title (in different folders) are 409.
func (t *Tenant) LinkTitle(ctx context.Context, scope knowmind.NoteScope, fromID, title, rel string) (knowmind.LinkResult, error) {
	if strings.TrimSpace(title) == "" {
		return knowmind.LinkResult{}, knowmind.InvalidParam("to_title", "to_title is blank")
	}
	if err := t.checkLinkSpec(knowmind.LinkSpec{RelType: rel, ToTitle: title}); err != nil {
		if kerr, ok := err.(*knowmind.Error); ok && kerr.Param == "links" {
			kerr.Param = "to_title"
		}
		return knowmind.LinkResult{}, err
	}
	n, err := t.findNote(ctx, scope, fromID, "")
	if err != nil {
		if knowmind.ErrorCode(err) == knowmind.ENOTFOUND {
			return knowmind.LinkResult{}, &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "from_id",
				Message: fmt.Sprintf("note %q (from_id) not found: to_title links notes only", runes.Truncate(fromID, 80))}
		}
		return knowmind.LinkResult{}, err
	}
	puid := n.projectUID()
	if puid == "" {
		return knowmind.LinkResult{}, knowmind.InvalidParam("from_id", "private notes without a project take no links")
	}
	var found struct{ N []dgNote }
	if err := t.queryVars(ctx, noteByTitleQuery, map[string]string{"$key": linkKey(title), "$project": puid}, &found); err != nil {
		return knowmind.LinkResult{}, fmt.Errorf("link: resolve to_title: %w", err)
	}
	found.N = slices.DeleteFunc(found.N, func(m dgNote) bool { return m.ID == n.ID || !m.visible(scope) })
	switch len(found.N) {
	case 0:
		if err := t.addForward(ctx, n.ID, puid, rel, title); err != nil {
			return knowmind.LinkResult{}, fmt.Errorf("link: forward reference: %w", err)
		}
		return knowmind.LinkResult{Pending: true}, nil
	case 1:
		res, err := t.Link(ctx, n.ID, found.N[0].ID, rel)
		res.ToID = found.N[0].ID
		return res, err
	default:
		ids := make([]string, len(found.N))
		for i, m := range found.N {
			ids[i] = m.ID + " (" + m.Path + ")"
		}
		return knowmind.LinkResult{}, &knowmind.Error{Code: knowmind.ECONFLICT, Param: "to_title",
			Message: "several notes are titled so: " + strings.Join(ids, ", ") + "; use to_id", Data: map[string]any{"ids": ids}}
	}
}

// applyLinks adds links after a note was written. The note is committed by then, so a failing
// link is reported in res.LinksDropped with its reason rather than failing the write.
func (t *Tenant) applyLinks(ctx context.Context, fromID, projectUID string, specs []knowmind.LinkSpec, res *knowmind.NoteWriteResult) {
	for _, l := range specs {
		err := t.linkOne(ctx, fromID, projectUID, l, res)
		if err == nil {
			continue
		}
		reason := "the link could not be written"
		if e := knowmind.AsError(err); e != nil && e.Code != knowmind.EINTERNAL {
			reason = e.Message
		} else {
			t.c.log.Warn("note link not made", "tenant", t.Name, "from", fromID, "to", l.To, "title", l.ToTitle, "err", err)
		}
		rel := l.RelType
		if rel == "" {
			rel = WikiRelation
		}
		res.LinksDropped = append(res.LinksDropped, knowmind.DroppedLink{RelType: rel, To: l.To,
			ToTitle: runes.Truncate(l.ToTitle, knowmind.MaxTitleChars), Reason: reason})
	}
}

func (t *Tenant) linkOne(ctx context.Context, fromID, projectUID string, l knowmind.LinkSpec, res *knowmind.NoteWriteResult) error {
	rel := l.RelType
	if rel == "" {
		rel = WikiRelation
	}
	scope := callerScope(ctx)
	if l.To != "" {
		var out struct{ N []dgNote }
		if err := t.queryVars(ctx, noteMetaQuery, map[string]string{"$id": l.To}, &out); err != nil {
			return err
		}
		if len(out.N) == 0 || out.N[0].Status != knowmind.StatusIndexed || out.N[0].hiddenFrom(scope) {
			return &knowmind.Error{Code: knowmind.ENOTFOUND, Param: "to", Message: fmt.Sprintf("note %q (to) not found", runes.Truncate(l.To, 80))}
		}
		if out.N[0].Project == nil || out.N[0].Project.UID != projectUID {
			return knowmind.InvalidParam("to", "to is a note of another project: links never cross projects")
		}
		if _, err := t.Link(ctx, fromID, l.To, rel); err != nil {
			return err
		}
		res.Links = append(res.Links, l.To)
		return nil
	}
	var found struct{ N []dgNote }
	if err := t.queryVars(ctx, noteByTitleQuery, map[string]string{"$key": linkKey(l.ToTitle), "$project": projectUID}, &found); err != nil {
		return err
	}
	found.N = slices.DeleteFunc(found.N, func(n dgNote) bool { return n.ID == fromID || n.hiddenFrom(scope) })
	if len(found.N) > 0 {
		if _, err := t.Link(ctx, fromID, found.N[0].ID, rel); err != nil {
			return err
		}
		res.Links = append(res.Links, l.ToTitle)
		return nil
	}
	if err := t.addForward(ctx, fromID, projectUID, rel, l.ToTitle); err != nil {
		return err
	}
	res.PendingLinks = append(res.PendingLinks, l.ToTitle)
	return nil
}

// addForward records a link waiting for a title, once per (note, relation, title).
func (t *Tenant) addForward(ctx context.Context, fromID, projectUID, rel, title string) error {
	return runTxn(ctx, t.dg, func(ctx context.Context, txn *dgo.Txn) error {
		resp, err := txn.QueryWithVars(ctx, pendingQuery, map[string]string{"$id": fromID})
		if err != nil {
			return err
		}
		var out struct {
			N []struct {
				UID string `json:"uid"`
				F   []struct {
					Rel string `json:"Forward.rel"`
					Key string `json:"Forward.key"`
				} `json:"f"`
			}
		}
		if err := json.Unmarshal(resp.Json, &out); err != nil {
			return err
		}
		if len(out.N) == 0 {
			return nil
		}
		for _, f := range out.N[0].F {
			if f.Rel == rel && f.Key == linkKey(title) {
				return nil
			}
		}
		body, _ := json.Marshal(map[string]any{"uid": "_:f", "dgraph.type": "Forward",
			"Forward.from": map[string]any{"uid": out.N[0].UID}, "Forward.project": map[string]any{"uid": projectUID},
			"Forward.key": linkKey(title), "Forward.title": strings.TrimSpace(title), "Forward.rel": rel})
		_, err = txn.Mutate(ctx, &api.Mutation{SetJson: body})
		return err
	})
}

// resolveForward links the notes that waited for one of titles to the note toID, and drops
// their forward references.
func (t *Tenant) resolveForward(ctx context.Context, toID, projectUID string, titles []string) {
	for _, title := range titles {
		var out struct {
			F []struct {
				UID  string `json:"uid"`
				Rel  string `json:"Forward.rel"`
				From *struct {
					ID string `json:"Memory.id"`
				} `json:"Forward.from"`
			}
		}
		if err := t.queryVars(ctx, forwardQuery, map[string]string{"$key": linkKey(title), "$project": projectUID}, &out); err != nil {
			t.c.log.Warn("forward links not resolved", "tenant", t.Name, "to", toID, "err", err)
			continue
		}
		for _, f := range out.F {
			if f.From != nil && f.From.ID != toID {
				if _, err := t.link(ctx, nil, f.From.ID, toID, f.Rel, knowmind.EdgeMeta{}); err != nil {
					t.c.log.Warn("forward link not made", "tenant", t.Name, "from", f.From.ID, "to", toID, "err", err)
					continue
				}
			}
			if _, err := t.dg.NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true,
				DelNquads: []byte(fmt.Sprintf("<%s> * * .", f.UID))}); err != nil {
				t.c.log.Warn("forward link not dropped", "tenant", t.Name, "uid", f.UID, "err", err)
			}
		}
	}
}

// linkKeysQuery finds the current notes of a project that any of a list of titles (as link
// keys, spliced as quoted literals: DQL variables hold no lists) resolves to.
const linkKeysQuery = `query q($project: string) {
  n(func: eq(Note.link_keys, [%s])) @filter(eq(Memory.status, "indexed") AND uid_in(Note.project, $project)) {
    Memory.id Note.link_keys
  }
}`

// closeDroppedLinks closes (valid_to, never deletes) the wiki-link edges an edit took out of a
// note's body: a REFERENCES edge to a note that a [[title]] of the former body resolves to and
// no [[title]] of the new body does, and drops the forward references of dropped titles. Like
// applyLinks it runs after the edit committed; a failure is logged, the edit stands. It returns
// the dropped titles whose edge or forward reference it removed.
func (t *Tenant) closeDroppedLinks(ctx context.Context, fromID, projectUID, oldBody, newBody string) []string {
	keep := map[string]bool{}
	newSpecs, _ := wikiSpecs(newBody)
	for _, s := range newSpecs {
		keep[linkKey(s.ToTitle)] = true
	}
	var dropped []string // titles as the former body wrote them
	oldSpecs, _ := wikiSpecs(oldBody)
	for _, s := range oldSpecs {
		if !keep[linkKey(s.ToTitle)] {
			dropped = append(dropped, s.ToTitle)
		}
	}
	if len(dropped) == 0 {
		return nil
	}
	quoted := []string{}
	for _, title := range dropped {
		quoted = append(quoted, strconv.Quote(linkKey(title)))
	}
	for key := range keep {
		quoted = append(quoted, strconv.Quote(key))
	}
	var out struct {
		N []struct {
			ID   string   `json:"Memory.id"`
			Keys []string `json:"Note.link_keys"`
		}
	}
	if err := t.queryVars(ctx, fmt.Sprintf(linkKeysQuery, strings.Join(quoted, ", ")), map[string]string{"$project": projectUID}, &out); err != nil {
		t.c.log.Warn("dropped links not closed", "tenant", t.Name, "from", fromID, "err", err)
		return nil
	}
	stillLinked := map[string]bool{fromID: true}
	for _, n := range out.N {
		if slices.ContainsFunc(n.Keys, func(k string) bool { return keep[k] }) {
			stillLinked[n.ID] = true
		}
	}
	closed := []string{}
	for _, title := range dropped {
		done := false
		for _, n := range out.N {
			if stillLinked[n.ID] || !slices.Contains(n.Keys, linkKey(title)) {
				continue
			}
			_, err := t.unlink(ctx, nil, fromID, n.ID, WikiRelation)
			var kerr *knowmind.Error
			switch {
			case err == nil:
				done = true
			case errors.As(err, &kerr) && kerr.Code == knowmind.ENOTFOUND: // no open edge: nothing to close
			default:
				t.c.log.Warn("dropped link not closed", "tenant", t.Name, "from", fromID, "to", n.ID, "err", err)
			}
			stillLinked[n.ID] = true // one close per target, however many dropped titles name it
		}
		if t.dropForward(ctx, fromID, linkKey(title)) || done {
			closed = append(closed, title)
		}
	}
	return closed
}

// dropForward deletes fromID's wiki-link forward reference to a title key (a pending link is no
// edge, so it has no history to keep), reporting whether there was one.
func (t *Tenant) dropForward(ctx context.Context, fromID, key string) bool {
	var out struct {
		N []struct {
			F []struct {
				UID string `json:"uid"`
				Rel string `json:"Forward.rel"`
				Key string `json:"Forward.key"`
			} `json:"f"`
		}
	}
	if err := t.queryVars(ctx, pendingQuery, map[string]string{"$id": fromID}, &out); err != nil || len(out.N) == 0 {
		return false
	}
	var del strings.Builder
	for _, f := range out.N[0].F {
		if f.Rel == WikiRelation && f.Key == key {
			fmt.Fprintf(&del, "<%s> * * .\n", f.UID)
		}
	}
	if del.Len() == 0 {
		return false
	}
	if _, err := t.dg.NewTxn().Mutate(ctx, &api.Mutation{CommitNow: true, DelNquads: []byte(del.String())}); err != nil {
		t.c.log.Warn("forward link not dropped", "tenant", t.Name, "from", fromID, "err", err)
		return false
	}
	return true
}

// noteLinks are a note's open edges both ways (knowmind_list_relations' view) and its pending
// forward references.
func (t *Tenant) noteLinks(ctx context.Context, n dgNote) (knowmind.NoteLinks, error) {
	rels, err := t.ListRelations(ctx, n.ID)
	if err != nil {
		return knowmind.NoteLinks{}, err
	}
	links := knowmind.NoteLinks{Out: []knowmind.NoteLink{}, In: []knowmind.NoteLink{}, Pending: []knowmind.NoteLink{}}
	for _, e := range rels.Outgoing {
		links.Out = append(links.Out, knowmind.NoteLink{RelType: e.RelType, ID: e.To, Title: e.Title})
	}
	for _, e := range rels.Incoming {
		links.In = append(links.In, knowmind.NoteLink{RelType: e.RelType, ID: e.From, Title: e.Title})
	}
	var out struct {
		N []struct {
			F []struct {
				Rel   string `json:"Forward.rel"`
				Title string `json:"Forward.title"`
			} `json:"f"`
		}
	}
	if err := t.queryVars(ctx, pendingQuery, map[string]string{"$id": n.ID}, &out); err != nil {
		return knowmind.NoteLinks{}, fmt.Errorf("pending links: %w", err)
	}
	if len(out.N) > 0 {
		for _, f := range out.N[0].F {
			links.Pending = append(links.Pending, knowmind.NoteLink{RelType: f.Rel, Title: f.Title})
		}
	}
	return links, nil
}
