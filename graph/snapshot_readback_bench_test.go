//go:build unix

package graph

import (
	"syscall"
	"testing"
	"time"

	"github.com/knowmind/knowmind/bm25"
	"github.com/knowmind/knowmind/snapshot"
)

// BenchmarkSnapshotReadBack is BenchmarkSnapshotOpen's open with the CPU it takes (getrusage of
// the process around each open, all goroutines and the collector's included: what a contended
// machine has to find for it), then the first queries a recall asks the opened text indexes (a
// search, the scores and terms of 300 references, their title scores), timed apart: the part
// of a cold tenant's read-back that the open could shift onto its first recall.
func BenchmarkSnapshotReadBack(b *testing.B) {
	path, key := benchSnapshotFile(b)
	refs := make([]uint64, 300)
	for i := range refs {
		refs[i] = uint64(0x10000 + i*331)
	}
	q := []string{"w1", "w17", "w333", "w4000", "w19999"}
	var cpu, first time.Duration
	b.ResetTimer()
	for range b.N {
		before := processCPU(b)
		r, err := snapshot.Open(path, key)
		if err != nil {
			b.Fatal(err)
		}
		res, err := decodeSnapshot(r, nil)
		if err != nil {
			b.Fatal(err)
		}
		r.Close()
		cpu += processCPU(b) - before
		var text, titles bm25.Index
		text.Replace("t", res.text)
		titles.Replace("t", res.titles)
		start := time.Now()
		text.Search("t", "", q, 100, bm25.Params{})
		text.ScoreRefs("t", "", q, refs, bm25.Params{})
		text.RefTerms("t", refs)
		titles.ScoreRefs("t", "", q, refs, bm25.Params{})
		first += time.Since(start)
	}
	b.ReportMetric(float64(cpu.Milliseconds())/float64(b.N), "cpu-ms/open")
	b.ReportMetric(float64(first.Microseconds())/float64(b.N), "first-queries-us")
}

// processCPU is the user and system CPU time the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
