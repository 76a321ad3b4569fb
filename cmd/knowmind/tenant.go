package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knowmind/knowmind/cells"
	"github.com/knowmind/knowmind/graph"
)

func init() {
	register("tenant", "tenant list | tenant analyst --tenant NAME (read-only Ratel login) | tenant credentials --tenant NAME (guardian login)", runTenant)
}

// runTenant takes serve's flags and environment (so it reaches the same
// Dgraph) plus --tenant. Analysts get their own read-only login
// (graph.AnalystLogin); the guardian login (credentials) is for operators.
func runTenant(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "credentials" && args[0] != "analyst") {
		return errors.New("usage: knowmind tenant list | knowmind tenant analyst --tenant NAME | knowmind tenant credentials --tenant NAME  [serve flags]")
	}
	sub := args[0]
	fs := flag.NewFlagSet("tenant "+sub, flag.ContinueOnError)
	tenantFlag := fs.String("tenant", "", "the tenant")
	cfg, pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("tenant %s: unexpected arguments %v", sub, pos)
	}
	tenant := *tenantFlag
	// Reading credentials needs no embedder (and so refuses no tenant whose vectors came from
	// another one).
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{})
	if err != nil {
		return err
	}
	defer b.Close()

	dir, err := cells.ReadDirectory(filepath.Join(cfg.DataDir, cells.DirectoryFileName))
	if err != nil {
		return err
	}
	if sub == "list" {
		placed, err := allTenants(ctx, cfg, b, dir)
		if err != nil {
			return err
		}
		for _, p := range placed {
			fmt.Println(p.name)
		}
		return nil
	}
	if tenant == "" {
		return fmt.Errorf("tenant %s: --tenant is required", sub)
	}
	// The credentials of the namespace the tenant lives in, in its cell.
	c, closeCell, err := cellClient(ctx, cfg, b, dir, placementOf(dir, tenant).Cell)
	if err != nil {
		return err
	}
	defer closeCell()
	var cred graph.NamespaceCredentials
	var note string
	if sub == "analyst" {
		cred, err = c.AnalystLogin(ctx, tenant)
		note = "It reads every predicate of this tenant and can change nothing. Running this again sets a new password."
	} else {
		cred, err = c.NamespaceCredentials(ctx, tenant)
		note = "This is the namespace's guardian: it can also write and change the schema. For analysts use `knowmind tenant analyst`."
	}
	if err != nil {
		return err
	}
	fmt.Printf("tenant:    %s\nnamespace: %d\nuser:      %s\npassword:  %s\n", cred.Tenant, cred.Namespace, cred.User, cred.Password)
	fmt.Fprintf(os.Stderr, "\nRatel: open http://localhost:8000, connect to the alpha's HTTP address (http://localhost:8080),\n"+
		"then Login with namespace %d, user %s and this password. The login sees tenant %q only.\n%s\nSee docs/analysts.md.\n",
		cred.Namespace, cred.User, cred.Tenant, note)
	return nil
}

// placedTenant is a tenant and the cell it lives in.
type placedTenant struct{ name, cell string }

// allTenants lists every tenant of every cell of the directory where it lives (a copy a move
// left in another cell is not listed), sorted by name.
func allTenants(ctx context.Context, cfg Config, b *backend, dir cells.Directory) ([]placedTenant, error) {
	var out []placedTenant
	for _, cell := range append([]string{homeCell}, dir.CellNames()...) {
		c, closeCell, err := cellClient(ctx, cfg, b, dir, cell)
		if err != nil {
			return nil, err
		}
		names, err := c.Tenants(ctx)
		closeCell()
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", cell, err)
		}
		for _, n := range names {
			if placementOf(dir, n).Cell == cell {
				out = append(out, placedTenant{n, cell})
			}
		}
	}
	slices.SortFunc(out, func(a, b placedTenant) int { return strings.Compare(a.name, b.name) })
	return out, nil
}
