package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
)

func init() {
	register("import", "import FILE|DIR --tenant NAME [--batch N]: load JSONL or a Markdown folder (Obsidian vault), resumable; DIR --project P syncs a vault with a project's notes", runImport)
	register("export", "export --tenant NAME [--out FILE]: write a tenant as JSONL (history and relations included); --format markdown --out DIR [--project P] writes a project's notes as a vault", runExport)
}

// runImport takes serve's flags (to reach the same Dgraph, with the same
// embedder) plus the path, --tenant and --batch. The tenant is created if it
// does not exist. Progress goes to stderr; refused records are listed at the
// end and make the exit status 1, after everything else was written.
func runImport(ctx context.Context, args []string) error {
	const usage = "usage: knowmind import FILE.jsonl|DIR --tenant NAME [--batch N] [--vector-index drop|keep] [serve flags]\n" +
		"       knowmind import DIR --tenant NAME --project HANDLE [serve flags]   (vault sync: the folder's files as the project's notes)"
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	tenant := fs.String("tenant", "", "tenant to import into (created if it does not exist)")
	project := fs.String("project", "", "sync the folder with this project's notes (docs/notes.md, \"Vault sync\") instead of importing it as documents")
	batch := fs.Int("batch", knowmind.ImportBatchSize, fmt.Sprintf("records per transaction, 1 to %d", knowmind.MaxImportBatchSize))
	// drop (default): Dgraph's HNSW index of chunk vectors is dropped for the import and
	// rebuilt once, in the background, at its end — updating it per chunk is most of a
	// batch's cost (docs/bulk.md). Recall does not wait for it: the service searches its own
	// copy of the vectors. keep: the index is updated per batch.
	vectorIndex := fs.String("vector-index", "drop", "drop: drop Dgraph's vector index for the import and rebuild it at its end; keep: update it per batch")
	cfg, pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return errors.New(usage)
	}
	if *vectorIndex != "drop" && *vectorIndex != "keep" {
		return fmt.Errorf("--vector-index %q: want drop or keep", *vectorIndex)
	}
	if *batch < 1 || *batch > knowmind.MaxImportBatchSize {
		return fmt.Errorf("--batch %d: want 1 to %d", *batch, knowmind.MaxImportBatchSize)
	}
	if *tenant == "" {
		return errors.New("import: --tenant is required\n" + usage)
	}
	if *project != "" {
		return runVaultSync(ctx, cfg, pos[0], *tenant, *project)
	}
	src, unresolved, err := openSource(pos[0])
	if err != nil {
		return err
	}
	// The import holds no copy of the vectors it writes; a running service loads them itself.
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{embedder: true, noExactVectors: true, bulk: true})
	if err != nil {
		return err
	}
	defer b.Close()
	t, closeCell, err := openTenant(ctx, cfg, b, *tenant, true, true)
	if err != nil {
		return err
	}
	defer closeCell()
	fmt.Fprintf(os.Stderr, "importing %s into tenant %s: %d records, batches of %d, embedder %s, vector index %s\n", src.Name(), *tenant, src.Total(), *batch, b.embedder.ID(), *vectorIndex)
	if *vectorIndex == "drop" {
		if err := t.DropVectorIndex(ctx); err != nil {
			return err
		}
	}
	sum, err := bulk.Import(ctx, src, t, bulk.Options{Batch: *batch, Progress: func(p bulk.Progress) {
		printImportProgress(*tenant, p)
	}})
	fmt.Fprintln(os.Stderr)
	switch {
	case *vectorIndex == "drop" && b.managed() != nil:
		// This command started the managed Dgraph and stops it on exit, which would end a
		// background build midway — and Dgraph v25.2.0 may then lose it (docs/dgraph-notes.md,
		// "Background index builds"). The index stays dropped: the next process opening the
		// tenant (serve) applies the schema, and its alpha builds the index in the background.
		fmt.Fprintln(os.Stderr, "vector index: left dropped; the next start of serve rebuilds it in the background (similar_to answers from a partial index until it is done; recall does not use it)")
	case *vectorIndex == "drop":
		// Also after a failed import: the service's next start would otherwise rebuild it
		// while starting. In the background: the command ends, Dgraph goes on building.
		if rerr := t.RestoreVectorIndex(context.WithoutCancel(ctx), true); rerr != nil {
			fmt.Fprintf(os.Stderr, "restoring the vector index failed: %v (the next start of serve restores it)\n", rerr)
		} else {
			fmt.Fprintln(os.Stderr, "vector index: Dgraph rebuilds it in the background (similar_to answers from a partial index until it is done; recall does not use it)")
		}
	}
	if sum.Resumed > 0 {
		fmt.Fprintf(os.Stderr, "resumed after %d records committed by an earlier run\n", sum.Resumed)
	}
	fmt.Fprintf(os.Stderr, "written %d, unchanged %d, refused %d in %s (%.0f records/s)\n",
		sum.Written, sum.Unchanged, sum.Failed, sum.Elapsed.Round(100*time.Millisecond), sum.Rate())
	if entries := sum.Entries - min(sum.Resumed, sum.Entries); entries > 0 && sum.EntriesTook > 0 {
		relations := sum.Done - sum.Resumed - entries
		fmt.Fprintf(os.Stderr, "memories and documents: %d in %s (%.0f/s); relations: %d in %s\n",
			entries, sum.EntriesTook.Round(100*time.Millisecond), float64(entries)/sum.EntriesTook.Seconds(),
			relations, (sum.Elapsed - sum.EntriesTook).Round(100*time.Millisecond))
	}
	if unresolved > 0 {
		fmt.Fprintf(os.Stderr, "%d wiki links name no note of the folder (not imported)\n", unresolved)
	}
	for _, f := range sum.Failures {
		id := ""
		if f.ID != "" {
			id = " (" + f.ID + ")"
		}
		fmt.Fprintf(os.Stderr, "refused %s%s: %v\n", f.Where, id, f.Err)
	}
	if sum.Failed > len(sum.Failures) {
		fmt.Fprintf(os.Stderr, "… and %d more refused\n", sum.Failed-len(sum.Failures))
	}
	if err != nil {
		return fmt.Errorf("import stopped: %w (run the same command again to resume)", err)
	}
	if sum.Failed > 0 {
		return fmt.Errorf("import: %d records refused", sum.Failed)
	}
	return nil
}

// openSource opens a folder or a .md file as Markdown, anything else as JSONL.
func openSource(path string) (bulk.Source, int, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if info.IsDir() || strings.EqualFold(filepath.Ext(path), ".md") {
		src, err := bulk.OpenMarkdown(path)
		if err != nil {
			return nil, 0, err
		}
		return src, src.UnresolvedLinks(), nil
	}
	src, err := bulk.OpenJSONL(path)
	return src, 0, err
}

// printImportProgress draws one line on stderr: a bar, records, rate and ETA.
func printImportProgress(label string, p bulk.Progress) {
	const width = 30
	frac := 1.0
	if p.Total > 0 {
		frac = float64(p.Done) / float64(p.Total)
	}
	n := int(frac * width)
	eta := "-"
	if d := p.ETA(); d > 0 {
		eta = d.Round(time.Second).String()
	}
	fmt.Fprintf(os.Stderr, "\r%s [%s%s] %d/%d records %.0f/s ETA %s  ", label, strings.Repeat("=", n), strings.Repeat(" ", width-n),
		p.Done, p.Total, p.Rate(), eta)
}

// runExport takes serve's flags plus --tenant and --out (default stdout).
func runExport(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("export", flag.ContinueOnError)
	tenantFlag := fs.String("tenant", "", "tenant to export")
	outFlag := fs.String("out", "", "file to write (default: stdout); with --format markdown the folder")
	format := fs.String("format", "jsonl", "jsonl (the whole tenant) or markdown (a project's notes as a vault)")
	project := fs.String("project", knowmind.DefaultProject, "with --format markdown: the project to write")
	cfg, pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	tenant, out := *tenantFlag, *outFlag
	const usage = "usage: knowmind export --tenant NAME [--out FILE] [serve flags]\n" +
		"       knowmind export --tenant NAME --format markdown --out DIR [--project HANDLE] [serve flags]"
	if tenant == "" || len(pos) > 0 {
		return errors.New(usage)
	}
	switch *format {
	case "jsonl":
	case "markdown":
		if out == "" {
			return errors.New("export --format markdown needs --out DIR\n" + usage)
		}
		return runVaultExport(ctx, cfg, tenant, *project, out)
	default:
		return fmt.Errorf("--format %q: want jsonl or markdown", *format)
	}
	// Reading needs no embedder; export tenants whatever embedder wrote them.
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{noExactVectors: true})
	if err != nil {
		return err
	}
	defer b.Close()
	t, closeCell, err := openTenant(ctx, cfg, b, tenant, false, false)
	if err != nil {
		return err
	}
	defer closeCell()
	f := os.Stdout
	if out != "" {
		// Written next to the target and renamed at the end: a failed export leaves no partial file.
		if f, err = os.CreateTemp(filepath.Dir(out), ".export-*.jsonl"); err != nil {
			return err
		}
		defer os.Remove(f.Name())
		defer f.Close()
	}
	w := bufio.NewWriterSize(f, 1<<20)
	jw, err := bulk.NewWriter(w, tenant)
	if err != nil {
		return err
	}
	start := time.Now()
	if err := t.Export(ctx, jw.Write); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if out != "" {
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(f.Name(), out); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "exported %d records of tenant %s in %s\n", jw.Records(), tenant, time.Since(start).Round(100*time.Millisecond))
	return nil
}

// cliActor is who a person at the command line writes notes as.
func cliActor(command string) knowmind.Actor {
	user := os.Getenv("USER")
	if user == "" {
		user = "cli"
	}
	return knowmind.Actor{Principal: "user:" + user, Via: command, Human: true}
}

// runVaultSync is `knowmind import DIR --project P`: the folder's files become the project's
// notes (created, updated with a new revision, or left unchanged; bulk.SyncVault).
func runVaultSync(ctx context.Context, cfg Config, dir, tenant, project string) error {
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{embedder: true, noExactVectors: true})
	if err != nil {
		return err
	}
	defer b.Close()
	t, closeCell, err := openTenant(ctx, cfg, b, tenant, true, true)
	if err != nil {
		return err
	}
	defer closeCell()
	start := time.Now()
	sum, err := bulk.SyncVault(ctx, t, project, dir, cliActor("knowmind import"))
	if err != nil && sum.Created+sum.Updated+sum.Unchanged+sum.Failed == 0 {
		// Refused before any file (no such folder or project): nothing to resume.
		return fmt.Errorf("vault sync: %w", err)
	}
	fmt.Fprintf(os.Stderr, "vault %s → project %s of tenant %s: created %d, updated %d, unchanged %d, refused %d; %d notes of the project have no file (left as they are) in %s\n",
		dir, project, tenant, sum.Created, sum.Updated, sum.Unchanged, sum.Failed, sum.NotInFolder, time.Since(start).Round(100*time.Millisecond))
	for _, f := range sum.Failures {
		fmt.Fprintf(os.Stderr, "refused %s: %v\n", f.Where, f.Err)
	}
	if err != nil {
		return fmt.Errorf("vault sync stopped: %w (run the same command again: what was written is then unchanged)", err)
	}
	if sum.Failed > 0 {
		return fmt.Errorf("vault sync: %d files refused", sum.Failed)
	}
	return nil
}

// runVaultExport is `knowmind export --format markdown`: the project's notes as a vault.
func runVaultExport(ctx context.Context, cfg Config, tenant, project, dir string) error {
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{noExactVectors: true})
	if err != nil {
		return err
	}
	defer b.Close()
	t, closeCell, err := openTenant(ctx, cfg, b, tenant, false, false)
	if err != nil {
		return err
	}
	defer closeCell()
	n, err := bulk.ExportVault(ctx, t, knowmind.NoteScope{}, project, dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "exported %d notes of project %s (tenant %s) to %s\n", n, project, tenant, dir)
	return nil
}
