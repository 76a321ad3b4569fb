package graph_test

import (
	"context"
	"flag"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// fuzzTenant is the one tenant a fuzzing process writes to: a namespace per input would cost
// more than the write.
var (
	fuzzOnce   sync.Once
	fuzzTen    *graph.Tenant
	fuzzWrites int
)

// fuzzBatch inputs are written between two checks that the alpha lives and a recall answers.
const fuzzBatch = 20

// FuzzWritePath feeds arbitrary text through the real write path (StoreMemory and
// UploadDocument: validation, chunking, the write guard, Dgraph's commit) into a real Dgraph.
// Each input is stored or refused with a domain error; after every batch — and after every
// seed — the alpha must be healthy and a recall must answer, so an input that Dgraph accepts
// but cannot apply (issue 34) fails the run. The seeds run in `make test`, `make fuzz` runs
// the target for FUZZTIME.
func FuzzWritePath(f *testing.F) {
	f.Add("Titel", "# "+strings.Repeat("b", 70_000), false)
	f.Add("T", strings.Repeat("x", 200_000), true)
	f.Add(strings.Repeat("ü", 500), "# T\n## "+strings.Repeat("c", 70_000), false)
	f.Add("url", "https://example.org/"+strings.Repeat("a/b?c=d&", 8_000), true)
	f.Add("base64", strings.Repeat("QUJDRA+/", 9_000), false)
	f.Add("cjk", strings.Repeat("知識グラフ", 15_000), true)
	f.Add("combining", "a"+strings.Repeat("\u0301", 40_000), false)
	f.Add("nfkc", strings.Repeat("\uFDFA", 3_000), false)
	f.Add("emoji", strings.Repeat("\U0001F600", 20_000), true)
	f.Add("mixed", "# \uFDFA\n"+strings.Repeat("\uFDFA ", 100)+"\n\n```\n"+strings.Repeat("z", 9000)+"\n```", false)
	// Small ones near the bounds, so that the mutator also has inputs that cost little to write.
	f.Add("", strings.Repeat("\uFDFA", 1_700), false)
	f.Add("x", strings.Repeat("x", 4_801), true)
	f.Add("#", "# "+strings.Repeat("a\u0301", 1_300), false)
	f.Add("\u0130", "\u023a\u01c4 \u200b\u00ad\u00a0\u2028 K ﬁ ㍻ ﷺ", true)
	f.Fuzz(func(t *testing.T, title, content string, document bool) {
		env := dgraphtest.Shared(t)
		fuzzOnce.Do(func() { fuzzTen = dgraphtest.NewTenant(t) })
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		var err error
		if document {
			_, err = fuzzTen.UploadDocument(ctx, knowmind.UploadDocumentInput{Title: title, Content: content})
		} else {
			_, err = fuzzTen.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: title, Content: content, Tags: []string{title}})
		}
		if err != nil && knowmind.AsError(err) == nil {
			t.Fatalf("write failed outside the domain errors: %v", err)
		}
		if fuzzWrites++; fuzzWrites%fuzzBatch == 0 || !isFuzzing() {
			checkAlive(ctx, t, env, fuzzTen)
		}
	})
}

// isFuzzing tells a fuzzing run (-fuzz) from the seed run of `go test`.
func isFuzzing() bool {
	f := flag.Lookup("test.fuzz")
	return f != nil && f.Value.String() != ""
}

func checkAlive(ctx context.Context, t *testing.T, env *dgraphtest.Env, ten *graph.Tenant) {
	t.Helper()
	if env.Cluster != nil && (!env.Cluster.Healthy() || env.Cluster.CrashLoop() != "") {
		t.Fatalf("alpha not healthy after %d writes: %s", fuzzWrites, env.Cluster.CrashLoop())
	}
	if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Die Kaffeemaschine steht im dritten Stock."}); err != nil {
		t.Fatalf("commit after %d writes: %v", fuzzWrites, err)
	}
	res, err := ten.Recall(ctx, knowmind.RecallQuery{Query: "Kaffeemaschine", K: 3})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("recall after %d writes: %d hits, %v", fuzzWrites, len(res.Hits), err)
	}
}
