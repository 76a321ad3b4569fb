package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
)

// runBenchImport writes the synthetic import workload (docs/bulk.md): n memories of ~40 words
// drawn Zipf-distributed from bench speed's vocabulary, and one
// RELATES_TO from each memory to a random earlier one; then imports it with the knowmind
// binary's import command (beside this one, else on PATH), which prints the rates.
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
		return errors.New("usage: knowmind-bench import --n N --tenant NAME [--batch N] [--out FILE] [serve flags]")
	}
	bin, err := knowmindBinary()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, bin, append([]string{"import", out}, rest...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return cmd.Run()
}

// knowmindBinary finds the service binary: beside this one (bin/), else on PATH.
func knowmindBinary() (string, error) {
	if self, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(self), "knowmind"); fileExists(p) {
			return p, nil
		}
	}
	p, err := exec.LookPath("knowmind")
	if err != nil {
		return "", fmt.Errorf("the import runs the knowmind binary: build it (make build) or put it on PATH: %w", err)
	}
	return p, nil
}

func fileExists(p string) bool {
	info, err := os.Stat(p)
	return err == nil && !info.IsDir()
}

// takeStringFlag removes --name value / --name=value (or one dash) from args, so the
// benchmark can take its own flags and hand the rest to knowmind import unchanged.
func takeStringFlag(args []string, name, def string) (string, []string) {
	val := def
	rest := make([]string, 0, len(args))
	for i := 0; i < len(args); i++ {
		a := args[i]
		trimmed := strings.TrimLeft(a, "-")
		if a == "--" {
			rest = append(rest, args[i:]...)
			break
		}
		switch {
		case strings.HasPrefix(a, "-") && trimmed == name && i+1 < len(args):
			val = args[i+1]
			i++
		case strings.HasPrefix(a, "-") && strings.HasPrefix(trimmed, name+"="):
			val = strings.TrimPrefix(trimmed, name+"=")
		default:
			rest = append(rest, a)
		}
	}
	return val, rest
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
