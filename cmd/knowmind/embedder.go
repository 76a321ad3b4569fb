package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/knowmind/knowmind/embed"
	"github.com/knowmind/knowmind/graph"
)

func init() {
	register("reembed", "re-embed every chunk of a tenant (or all) with the configured embedder, resumable", runReembed)
	register("model", "model pull NAME [DIR]: download a sentence-transformer ONNX model (needs internet)", runModel)
}

// newEmbedder builds the configured embedding provider.
func newEmbedder(cfg Config) (embed.Embedder, error) {
	e, err := embed.New(embed.Config{
		Provider: cfg.Embedder, ModelDir: cfg.ModelDir,
		URL: cfg.EmbedURL, Model: cfg.EmbedModel, APIKey: os.Getenv("KNOWMIND_EMBED_API_KEY"),
	})
	if err != nil {
		return nil, fmt.Errorf("embedder %q: %w", cfg.Embedder, err)
	}
	return e, nil
}

func runReembed(ctx context.Context, args []string) error {
	// Same flags as serve, plus --tenant and --batch.
	fs := flag.NewFlagSet("reembed", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant to re-embed (default: all)")
	batch := fs.Int("batch", 64, "chunks per transaction")
	cfg, pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("reembed: unexpected arguments %v", pos)
	}
	if *batch < 1 {
		return fmt.Errorf("--batch %d: want a positive number", *batch)
	}
	// The backend must not refuse the tenants we are about to fix.
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{embedder: true, anyEmbedder: true})
	if err != nil {
		return err
	}
	defer b.Close()
	names := []string{*tenant}
	if *tenant == "" {
		if names, err = b.client.Tenants(ctx); err != nil {
			return err
		}
	}
	for _, n := range names {
		start := time.Now()
		err := b.client.Reembed(ctx, n, *batch, func(p graph.ReembedProgress) {
			printProgress(p.Tenant, p.Done, p.Total, time.Since(start))
		})
		fmt.Fprintln(os.Stderr)
		if err != nil {
			return fmt.Errorf("tenant %s: %w (run the command again to resume)", n, err)
		}
		fmt.Fprintf(os.Stderr, "tenant %s: vectors now from %s\n", n, b.embedder.ID())
	}
	return nil
}

// printProgress draws a one-line progress bar on stderr.
func printProgress(label string, done, total int, elapsed time.Duration) {
	const width = 30
	frac := 1.0
	if total > 0 {
		frac = float64(done) / float64(total)
	}
	n := int(frac * width)
	rate := float64(done) / max(elapsed.Seconds(), 0.001)
	fmt.Fprintf(os.Stderr, "\r%s [%s%s] %d/%d chunks %.0f/s", label, strings.Repeat("=", n), strings.Repeat(" ", width-n), done, total, rate)
}

func runModel(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("model", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() < 2 || fs.Arg(0) != "pull" {
		return fmt.Errorf("usage: knowmind model pull NAME [DIR]   e.g. knowmind model pull intfloat/multilingual-e5-small ./models")
	}
	dir := "./models"
	if fs.NArg() > 2 {
		dir = fs.Arg(2)
	}
	path, err := embed.Pull(ctx, fs.Arg(1), dir)
	if err != nil {
		return err
	}
	fmt.Printf("model in %s\nstart with: knowmind serve --embedder hugot --model-dir %s\n", path, path)
	return nil
}
