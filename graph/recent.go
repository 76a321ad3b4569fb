package graph

import (
	"context"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
)

// MaxRecent bounds knowmind_list_recent's k (the spec allows 1 to 50).
const MaxRecent = 50

// listRecentQuery lists the newest memories and documents by creation
// (transaction) time: every version and status, failed ones included, so a
// failed ingest is visible where the client looks for what it stored, and
// superseded versions with their valid_to. total counts them all. A document
// replaced by a new upload of its title is not listed: for the client it is
// gone (upload_document), though replay and the time-travel tools still read it.
// (Not func: has(Memory.created_at): on Dgraph v25.2.0 that root, ordered by
// the same predicate, returned only the newest node.)
// A page after a cursor starts at the cursor's created_at (le) and skips the
// entries of that instant the previous pages returned.
const listRecentQuery = `query q($k: int, $before: string) {
  items(func: eq(Memory.kind, ["memory", "document"]), orderdesc: Memory.created_at, first: $k) @filter(has(Memory.created_at) AND NOT ` + replacedDocument + `{{.After}}) {
    uid Memory.id Memory.title Memory.status Memory.kind Memory.created_at Memory.updated_at Memory.valid_to
    chunks: count(Memory.chunks)
  }
  total(func: eq(Memory.kind, ["memory", "document"])) @filter(has(Memory.created_at) AND NOT ` + replacedDocument + `) { count(uid) }
}`

// replacedDocument matches a document a new upload of its title closed (documents.go).
const replacedDocument = `(eq(Memory.kind, "document") AND has(Memory.valid_to))`

// recentCursor is where a list_recent page ends: the created_at of its last
// item and how many items of exactly that instant were returned so far.
type recentCursor struct {
	at   time.Time
	seen int
}

func (c recentCursor) String() string {
	return base64.RawURLEncoding.EncodeToString([]byte(c.at.UTC().Format(time.RFC3339Nano) + "|" + strconv.Itoa(c.seen)))
}

// cutPage cuts one page of k rows from rows, which a query returned newest first
// from the cursor's time on (k + c.seen + 1 of them): it skips the rows at
// the cursor's time that earlier pages showed, and returns the cursor of the
// next page ("" when none). Rows sharing a time stay paged correctly because
// the cursor counts how many of them were shown.
func cutPage[T any](c recentCursor, rows []T, k int, at func(T) time.Time) ([]T, string) {
	for skipped := 0; skipped < c.seen && len(rows) > 0 && at(rows[0]).Equal(c.at); skipped++ {
		rows = rows[1:]
	}
	if len(rows) <= k {
		return rows, ""
	}
	rows = rows[:k]
	last := at(rows[k-1])
	next := recentCursor{at: last}
	if last.Equal(c.at) {
		next.seen = c.seen
	}
	for _, r := range rows {
		if at(r).Equal(last) {
			next.seen++
		}
	}
	return rows, next.String()
}

func parseRecentCursor(s string) (recentCursor, error) {
	bad := knowmind.InvalidParam("cursor", "cursor is not one list_recent returned")
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return recentCursor{}, bad
	}
	at, seen, ok := strings.Cut(string(raw), "|")
	if !ok {
		return recentCursor{}, bad
	}
	var c recentCursor
	if c.at, err = time.Parse(time.RFC3339Nano, at); err != nil {
		return recentCursor{}, bad
	}
	if c.seen, err = strconv.Atoi(seen); err != nil || c.seen < 0 || c.seen > 1<<20 {
		return recentCursor{}, bad
	}
	return c, nil
}

// ListRecentPage returns up to k entries, newest first, after cursor ("" =
// from the newest), the total and the cursor of the next page ("" at the
// end). Entries created while paging appear on no later page; none is
// skipped or repeated.
func (t *Tenant) ListRecentPage(ctx context.Context, k int, cursor string) (knowmind.RecentPage, error) {
	if k < 1 || k > MaxRecent {
		return knowmind.RecentPage{}, knowmind.InvalidParam("k", "k must be between 1 and %d", MaxRecent)
	}
	if len(cursor) > 200 {
		return knowmind.RecentPage{}, knowmind.InvalidParam("cursor", "cursor is not one list_recent returned")
	}
	vars := map[string]string{}
	after := ""
	var cur recentCursor
	if cursor != "" {
		var err error
		if cur, err = parseRecentCursor(cursor); err != nil {
			return knowmind.RecentPage{}, err
		}
		after = " AND le(Memory.created_at, $before)"
		vars["$before"] = cur.at.Format(time.RFC3339Nano)
	}
	// One more than the page, to know whether another follows.
	vars["$k"] = strconv.Itoa(k + cur.seen + 1)
	q := strings.Replace(listRecentQuery, "{{.After}}", after, 1)
	if cursor == "" {
		q = strings.Replace(q, "query q($k: int, $before: string)", "query q($k: int)", 1)
	}
	var out struct {
		Items []dgMemory
		Total []struct{ Count int }
	}
	if err := t.queryVars(ctx, q, vars, &out); err != nil {
		return knowmind.RecentPage{}, fmt.Errorf("list recent: %w", err)
	}
	page := knowmind.RecentPage{Items: []knowmind.RecentItem{}}
	if len(out.Total) > 0 {
		page.Total = out.Total[0].Count
	}
	rows, next := cutPage(cur, out.Items, k, func(m dgMemory) time.Time { return m.CreatedAt })
	for _, m := range rows {
		page.Items = append(page.Items, knowmind.RecentItem{ID: m.ID, Title: m.Title, Status: m.Status, IndexedChunks: m.Chunks,
			CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Kind: m.Kind, ValidTo: m.ValidTo})
	}
	page.NextCursor = next
	return page, nil
}
