package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// BenchmarkStartSession measures knowmind_start_session with a project hint (profile, projects,
// index and knownValues over 300 notes in 12 folders, visit upsert, delta of 300 notes another
// principal wrote), through graph (no HTTP).
func BenchmarkStartSession(b *testing.B) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	other := knowmind.NoteScope{Principal: "tok:other"}
	for i := range 300 {
		if _, err := ten.CreateNote(ctx, other, knowmind.CreateNoteInput{Project: "main", Path: fmt.Sprintf("Ordner%d/Sub", i%12),
			Body: fmt.Sprintf("# Notiz %d\n\nKunde %d.", i, i), Tags: []string{fmt.Sprintf("t%d", i%7)}, Class: knowmind.ClassUserDoc,
			Actor: knowmind.Actor{Principal: "tok:other", Via: "bench"}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := range b.N {
		scope := knowmind.NoteScope{Principal: fmt.Sprintf("tok:bench%d", i%2)}
		s, err := ten.StartSession(ctx, scope, "main")
		if err != nil || s.Index.Notes != 300 {
			b.Fatal(err, s.Index)
		}
	}
}

// BenchmarkRenameNote50Referrers measures knowmind_rename_note of a note 50 others link by
// [[title]]: read, 51 new bodies chunked and embedded, one transaction.
func BenchmarkRenameNote50Referrers(b *testing.B) {
	ctx := context.Background()
	ten := dgraphtest.NewTenant(b)
	target := createNote(b, ten, "", "# Ziel 0\n\nDas Ziel.")
	for i := range 50 {
		createNote(b, ten, "Verweise", fmt.Sprintf("# Verweis %d\n\nSiehe [[Ziel 0]] und weiter.", i))
	}
	version := target.VersionToken
	b.ResetTimer()
	for i := range b.N {
		res, err := ten.RenameNote(ctx, notesScope, target.ID, version, fmt.Sprintf("Ziel %d", i+1), notesAgent)
		if err != nil || len(res.Rewritten) != 50 {
			b.Fatal(err, len(res.Rewritten))
		}
		version = res.VersionToken
	}
}
