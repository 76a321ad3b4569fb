package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"regexp"
	"text/tabwriter"
	"time"

	"github.com/knowmind/knowmind"
)

func init() {
	register("trash", "trash list --tenant T | trash restore --tenant T ID | trash empty --tenant T --yes (notes in the trash; for people only)", runTrash)
}

const trashUsage = `usage:
  knowmind trash list --tenant NAME [serve flags]
  knowmind trash restore --tenant NAME NOTE-ID [serve flags]
  knowmind trash empty --tenant NAME --yes [serve flags]

knowmind_delete_note moves a note to the trash; only these commands restore it or delete it for good.`

// noteIDShape is a note id (a UUID), told apart from flag values among the arguments.
var noteIDShape = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func runTrash(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "restore" && args[0] != "empty") {
		fmt.Fprintln(os.Stderr, trashUsage)
		return errors.New("trash: missing or unknown subcommand")
	}
	sub := args[0]
	fs := flag.NewFlagSet("trash "+sub, flag.ContinueOnError)
	tenantFlag := fs.String("tenant", "", "the tenant")
	yes := fs.Bool("yes", false, "empty: delete the notes for good")
	cfg, pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	tenant := *tenantFlag
	if tenant == "" {
		fmt.Fprintln(os.Stderr, trashUsage)
		return errors.New("trash: --tenant is required")
	}
	var id string
	if sub == "restore" {
		// The id may stand before or after the serve flags.
		if len(pos) != 1 || !noteIDShape.MatchString(pos[0]) {
			return errors.New("trash restore: the note id (from `knowmind trash list`) is required")
		}
		id, pos = pos[0], nil
	}
	if len(pos) > 0 {
		return fmt.Errorf("trash %s: unexpected arguments %v", sub, pos)
	}
	if sub == "empty" && !*yes {
		return errors.New("trash empty deletes the notes for good: add --yes")
	}
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{})
	if err != nil {
		return err
	}
	defer b.Close()
	t, closeCell, err := openTenant(ctx, cfg, b, tenant, false, sub != "list")
	if err != nil {
		return err
	}
	defer closeCell()
	switch sub {
	case "list":
		list, err := t.ListTrash(ctx)
		if err != nil {
			return err
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
		fmt.Fprintln(w, "ID\tPROJECT\tPATH\tTITLE\tTRASHED")
		for _, n := range list {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", n.ID, n.Project, n.Path, n.Title, n.TrashedAt.UTC().Format(time.RFC3339))
		}
		return w.Flush()
	case "restore":
		user := os.Getenv("USER")
		if user == "" {
			user = "cli"
		}
		if err := t.RestoreNote(ctx, id, knowmind.Actor{Principal: "user:" + user, Via: "knowmind trash restore", Human: true}); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "note %s restored\n", id)
	case "empty":
		ids, err := t.EmptyTrash(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "%d notes deleted for good\n", len(ids))
	}
	return nil
}
