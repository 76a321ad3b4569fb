package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
)

func init() {
	register("bench-import", "bench-import --n 10000 --tenant NAME [--batch N] [--out FILE]: write N synthetic memories as JSONL and import them (the import rate)", runBenchImport)
}

// runBenchImport writes the synthetic import workload (docs/bulk.md): n memories of ~40 words
// drawn Zipf-distributed from bench speed's vocabulary, and one
// RELATES_TO from each memory to a random earlier one; then imports it through
// knowmind import, which prints the rates.
func runBenchImport(ctx context.Context, args []string) error {
	nFlag, rest := takeStringFlag(args, "n", "10000")
	out, rest := takeStringFlag(rest, "out", "")
	n, err := strconv.Atoi(nFlag)
	if err != nil || n < 1 || n > 1_000_000 {
		return fmt.Errorf("--n %q: want 1 to 1000000", nFlag)
	}
	if out == "" {
		dir, err := os.MkdirTemp("", "knowmind-bench-import-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		out = filepath.Join(dir, "synthetic.jsonl")
	}
	start := time.Now()
	if err := writeSynthetic(out, n); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %d memories and %d relations to %s in %s\n", n, n-1, out, time.Since(start).Round(100*time.Millisecond))
	if len(rest) == 0 {
		return errors.New("usage: knowmind bench-import --n N --tenant NAME [--batch N] [--out FILE] [serve flags]")
	}
	return runImport(ctx, append([]string{out}, rest...))
}

func writeSynthetic(path string, n int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	buf := bufio.NewWriterSize(f, 1<<20)
	w, err := bulk.NewWriter(buf, "synthetic")
	if err != nil {
		return err
	}
	wl := newWorkload(1)
	id := func(i int) string {
		return uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("import-%d", i))).String()
	}
	for i := range n {
		title, content := wl.memory(i)
		rec := knowmind.Record{Type: knowmind.RecordMemory, ID: id(i), Title: title, Content: content, Source: "synthetic"}
		if err := w.Write(rec); err != nil {
			return err
		}
	}
	rng := rand.New(rand.NewPCG(7, 7))
	for i := 1; i < n; i++ {
		if err := w.Write(knowmind.Record{Type: knowmind.RecordRelation, From: id(i), To: id(rng.IntN(i)), RelType: "RELATES_TO"}); err != nil {
			return err
		}
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	return f.Close()
}
