package graph

import (
	"context"
	"fmt"
	"strconv"

	"github.com/knowmind/knowmind"
)

// projectNotesPage is how many notes ProjectNotes reads per query.
const projectNotesPage = 200

// vaultNotesQuery pages through a project's shared notes outside the trash, by uid.
var vaultNotesQuery = `query q($p: string, $after: string) {
  p(func: uid($p)) {
    n: ~Note.project (first: ` + strconv.Itoa(projectNotesPage) + `, after: $after)
      @filter(eq(Memory.status, "indexed") AND eq(Note.class, "user-doc")) { ` + noteFields + ` }
  }
}`

// ProjectNotes calls each for every shared note of the project (handle) that scope may see,
// whole (content and frontmatter), a page at a time: what a vault sync compares with the
// folder and what a Markdown export writes.
func (t *Tenant) ProjectNotes(ctx context.Context, scope knowmind.NoteScope, project string, each func(knowmind.Note) error) error {
	p, err := t.projectRef(ctx, scope, project)
	if err != nil {
		return err
	}
	after := "0x0"
	for {
		var out struct {
			P []struct {
				N []dgNote `json:"n"`
			} `json:"p"`
		}
		if err := t.queryVars(ctx, vaultNotesQuery, map[string]string{"$p": p.UID, "$after": after}, &out); err != nil {
			return fmt.Errorf("read the notes of project %q: %w", project, err)
		}
		if len(out.P) == 0 || len(out.P[0].N) == 0 {
			return nil
		}
		page := out.P[0].N
		for _, n := range page {
			if !n.visible(scope) {
				continue
			}
			if err := each(n.domain()); err != nil {
				return err
			}
		}
		if len(page) < projectNotesPage {
			return nil
		}
		after = page[len(page)-1].UID
	}
}
