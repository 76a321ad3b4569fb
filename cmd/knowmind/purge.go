package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/knowmind/knowmind/cells"
)

func init() {
	register("purge", "purge --older-than 90d [--tenant T] [--dry-run] (erase history that ended before the retention; for people only)", runPurge)
}

const purgeUsage = `usage:
  knowmind purge --older-than AGE [--tenant NAME] [--dry-run] [serve flags]

Writes never erase: superseded versions, replaced documents, former note bodies and notes in the
trash stay readable as of their time. This command erases, for one tenant or all, what ended
more than AGE ago (e.g. 90d, 36h, 2160h): versions superseded before it, note revisions
replaced before it, and notes in the trash since before it. --dry-run counts without erasing.`

// maxAgeDays is the longest retention in days a time.Duration holds (about 292 years): more days
// would wrap to a negative age, a cut-off in the future, and erase all history.
const maxAgeDays = int(math.MaxInt64 / int64(24*time.Hour))

// parseAge reads a retention: Go durations (36h, 90m) and whole days (90d).
func parseAge(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 0 || n > maxAgeDays {
			return 0, fmt.Errorf("--older-than %q: want whole days like 90d or a duration like 36h", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("--older-than %q: want whole days like 90d or a duration like 36h", s)
	}
	return d, nil
}

func runPurge(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("purge", flag.ContinueOnError)
	tenantFlag := fs.String("tenant", "", "the tenant (default: every tenant)")
	olderThan := fs.String("older-than", "", "the retention: erase what ended longer ago (e.g. 90d)")
	dry := fs.Bool("dry-run", false, "count what would be erased; erase nothing")
	cfg, pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("purge: unexpected arguments %v", pos)
	}
	if *olderThan == "" {
		fmt.Fprintln(os.Stderr, purgeUsage)
		return errors.New("purge: --older-than is required")
	}
	age, err := parseAge(*olderThan)
	if err != nil {
		return err
	}
	cut := time.Now().UTC().Add(-age)
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{})
	if err != nil {
		return err
	}
	defer b.Close()
	tenants := []string{*tenantFlag}
	if *tenantFlag == "" {
		dir, err := cells.ReadDirectory(filepath.Join(cfg.DataDir, cells.DirectoryFileName))
		if err != nil {
			return err
		}
		placed, err := allTenants(ctx, cfg, b, dir)
		if err != nil {
			return err
		}
		tenants = tenants[:0]
		for _, p := range placed {
			tenants = append(tenants, p.name)
		}
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	verb := "ERASED"
	if *dry {
		verb = "WOULD ERASE"
	}
	fmt.Fprintf(w, "TENANT\t%s: VERSIONS\tREVISIONS\tTRASHED NOTES\tENDED BEFORE\n", verb)
	for _, name := range tenants {
		t, closeCell, err := openTenant(ctx, cfg, b, name, false, !*dry)
		if err != nil {
			return err
		}
		res, err := t.Purge(ctx, cut, *dry)
		closeCell()
		if err != nil {
			return fmt.Errorf("purge %s: %w", name, err)
		}
		fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", name, res.Versions, res.Revisions, res.TrashedNotes, cut.Format(time.RFC3339))
	}
	return w.Flush()
}
