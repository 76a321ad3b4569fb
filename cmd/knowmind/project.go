package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"text/tabwriter"
	"time"

	"github.com/knowmind/knowmind"
)

func init() {
	register("project", "project create --tenant T --handle H [--name N] | project list --tenant T (notes projects; people make them, agents name them)", runProject)
}

const projectUsage = `usage:
  knowmind project create --tenant NAME --handle HANDLE [--name "Display name"] [serve flags]
  knowmind project list --tenant NAME [serve flags]

A project holds notes (docs/notes.md). Every tenant has "main". The handle is a slug
(lower-case letters, digits, - and _); agents pass it verbatim.`

func runProject(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "create" && args[0] != "list") {
		fmt.Fprintln(os.Stderr, projectUsage)
		return errors.New("project: missing or unknown subcommand")
	}
	sub := args[0]
	fs := flag.NewFlagSet("project "+sub, flag.ContinueOnError)
	tenantFlag := fs.String("tenant", "", "the tenant")
	handleFlag := fs.String("handle", "", "the new project's handle (create)")
	nameFlag := fs.String("name", "", "the new project's name (create; default: the handle)")
	cfg, pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	tenant, handle, name := *tenantFlag, *handleFlag, *nameFlag
	if tenant == "" || (sub == "create" && handle == "") || len(pos) > 0 {
		fmt.Fprintln(os.Stderr, projectUsage)
		return errors.New("project: --tenant (and for create --handle) is required")
	}
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{})
	if err != nil {
		return err
	}
	defer b.Close()
	t, closeCell, err := openTenant(ctx, cfg, b, tenant, false, sub == "create")
	if err != nil {
		return err
	}
	defer closeCell()
	if sub == "create" {
		p, err := t.CreateProject(ctx, handle, name)
		if err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "project %q (%s) created in tenant %q\n", p.Handle, p.Name, tenant)
		return nil
	}
	list, err := t.ListProjects(ctx, knowmind.NoteScope{})
	if err != nil {
		return err
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "HANDLE\tNAME\tNOTES\tCREATED")
	for _, p := range list {
		fmt.Fprintf(w, "%s\t%s\t%d\t%s\n", p.Handle, p.Name, p.Notes, p.CreatedAt.UTC().Format(time.RFC3339))
	}
	return w.Flush()
}
