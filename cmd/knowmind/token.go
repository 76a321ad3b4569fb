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
	"text/tabwriter"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/cells"
	"github.com/knowmind/knowmind/graph"
)

func init() {
	register("token", "token create --tenant NAME --scopes read,write [--projects a,b] [--toolsets memory|notes,engine|all] [--name N] [--expires 720h] | token list [--tenant NAME] | token revoke ID", runToken)
}

const tokenUsage = `usage:
  knowmind token create --tenant NAME --scopes read[,write,admin] [--projects a,b] [--toolsets memory,notes,engine|all] [--name NAME] [--expires DURATION] [serve flags]
  knowmind token list [--tenant NAME] [serve flags]
  knowmind token revoke ID [serve flags]

The token is printed once; only its SHA-256 is stored. A new tenant gets its
Dgraph namespace on the first token. Revocation takes effect on the next request.
--projects limits the token to these notes projects (default: all; see knowmind project).
--toolsets limits the MCP tools it sees and calls: memory (recall, store, link, ...), notes
(start_session, notes, search, ...), engine (explore, capture, drafts, entities, goals,
briefing), or all; default: memory (the seed-000 tools), so an agent sees only what it needs.`

// runToken takes serve's flags and environment, so it reaches the same Dgraph
// (a running `knowmind serve` with the same --data-dir, or an external one).
func runToken(ctx context.Context, args []string) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(os.Stderr, tokenUsage)
		return errors.New("token: missing subcommand")
	}
	sub := args[0]
	fs := flag.NewFlagSet("token "+sub, flag.ContinueOnError)
	tenantFlag := fs.String("tenant", "", "the token's tenant (create; list: only its tokens)")
	scopesFlag := fs.String("scopes", "", "read[,write,admin] (create)")
	nameFlag := fs.String("name", "", "a name to tell the token by (create)")
	expiresFlag := fs.String("expires", "", "lifetime, e.g. 720h (create; default: none)")
	projectsFlag := fs.String("projects", "", "notes projects the token may use (create; default: all)")
	toolsetsFlag := fs.String("toolsets", knowmind.ToolsetMemory, "toolsets the token sees: memory, notes, engine, or all (create)")
	cfg, pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	tenant, scopes, name, expires := *tenantFlag, *scopesFlag, *nameFlag, *expiresFlag
	projects, toolsets := *projectsFlag, *toolsetsFlag
	var id string
	if sub == "revoke" {
		// The id may stand before or after the serve flags.
		if len(pos) != 1 || !strings.HasPrefix(pos[0][strings.Index(pos[0], ":")+1:], "0x") {
			return errors.New("token revoke: the token ID (0x… or CELL:0x…, from `knowmind token list`) is required")
		}
		id, pos = pos[0], nil
	}
	if len(pos) > 0 {
		return fmt.Errorf("token %s: unexpected arguments %v", sub, pos)
	}
	var scopeList []knowmind.Scope
	var expiresAt *time.Time
	switch sub {
	case "create":
		if tenant == "" || scopes == "" {
			fmt.Fprintln(os.Stderr, tokenUsage)
			return errors.New("token create: --tenant and --scopes are required")
		}
		for _, s := range splitList(scopes) {
			sc, ok := knowmind.ParseScope(s)
			if !ok {
				return fmt.Errorf("token create: unknown scope %q (read, write, admin)", s)
			}
			scopeList = append(scopeList, sc)
		}
		if expires != "" {
			d, err := time.ParseDuration(expires)
			if err != nil || d <= 0 {
				return fmt.Errorf("token create: --expires %q: want a positive duration such as 720h", expires)
			}
			at := time.Now().Add(d).UTC()
			expiresAt = &at
		}
	case "list", "revoke":
	default:
		fmt.Fprintln(os.Stderr, tokenUsage)
		return fmt.Errorf("token: unknown subcommand %q", sub)
	}

	// Token bookkeeping needs no embedder.
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{})
	if err != nil {
		return err
	}
	defer b.Close()
	// A token's row that counts is in its tenant's cell (docs/scale.md, "cells"): create and
	// revoke write there, list reads there.
	dir, err := cells.ReadDirectory(filepath.Join(cfg.DataDir, cells.DirectoryFileName))
	if err != nil {
		return err
	}

	switch sub {
	case "create":
		var projectList []string
		if projects != "" {
			projectList = splitList(projects)
		}
		toolsetList := slices.Clone(knowmind.AllToolsets)
		if toolsets != "all" {
			toolsetList = splitList(toolsets)
		}
		p := placementOf(dir, tenant)
		if p.ReadOnly {
			return errMoving(tenant)
		}
		c, closeCell, err := cellClient(ctx, cfg, b, dir, p.Cell)
		if err != nil {
			return err
		}
		defer closeCell()
		secret, tok, err := c.CreateLimitedToken(ctx, tenant, scopeList, projectList, toolsetList, name, expiresAt)
		if err != nil {
			return err
		}
		fmt.Println(secret)
		fmt.Fprintf(os.Stderr, "token %s for tenant %q, scopes %s%s%s%s — shown once, store it now\n",
			cells.QualifyTokenID(p.Cell, tok.ID), tok.Tenant, joinScopes(tok.Scopes), projectsNote(tok.Projects), toolsetsNote(tok.Toolsets), expiryNote(tok.ExpiresAt))
	case "list":
		names := []string{homeCell}
		if tenant != "" {
			names = []string{placementOf(dir, tenant).Cell}
		} else {
			names = append(names, dir.CellNames()...)
		}
		var toks []graph.Token
		for _, cell := range names {
			c, closeCell, err := cellClient(ctx, cfg, b, dir, cell)
			if err != nil {
				return err
			}
			listed, err := c.ListTokens(ctx, tenant)
			closeCell()
			if err != nil {
				return fmt.Errorf("cell %s: %w", cell, err)
			}
			for _, t := range listed {
				// A copy in a cell its tenant has left is not the token.
				if placementOf(dir, t.Tenant).Cell == cell {
					t.ID = cells.QualifyTokenID(cell, t.ID)
					toks = append(toks, t)
				}
			}
		}
		printTokens(toks)
	case "revoke":
		cell, local := cells.SplitTokenID(id)
		c, closeCell, err := cellClient(ctx, cfg, b, dir, cell)
		if err != nil {
			return err
		}
		defer closeCell()
		tok, err := c.TokenByID(ctx, local)
		if err != nil {
			return err
		}
		if p := placementOf(dir, tok.Tenant); p.ReadOnly {
			return errMoving(tok.Tenant)
		} else if p.Cell != cell {
			return fmt.Errorf("token %s: its tenant %q lives in cell %s now; revoke the token's row there (knowmind token list --tenant %s)", id, tok.Tenant, p.Cell, tok.Tenant)
		}
		if err := c.RevokeToken(ctx, local); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "token %s revoked\n", id)
	}
	return nil
}

// errMoving refuses a token change while its tenant is being moved between cells: the move
// copies the tenant's tokens once, so a change now could be left behind in the source.
func errMoving(tenant string) error {
	return knowmind.Errorf(knowmind.EUNAVAILABLE, "tenant %q is being moved between cells (knowmind cell list); change its tokens once the move is done", tenant)
}

func printTokens(toks []graph.Token) {
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tTENANT\tNAME\tSCOPES\tPROJECTS\tCREATED\tLAST USED\tEXPIRES\tREVOKED")
	ts := func(t *time.Time) string {
		if t == nil {
			return "-"
		}
		return t.UTC().Format(time.RFC3339)
	}
	for _, t := range toks {
		name := t.Name
		if name == "" {
			name = "-"
		}
		projects := "all"
		if len(t.Projects) > 0 {
			projects = strings.Join(t.Projects, ",")
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Tenant, name, joinScopes(t.Scopes), projects,
			t.CreatedAt.UTC().Format(time.RFC3339), ts(t.LastUsedAt), ts(t.ExpiresAt), ts(t.RevokedAt))
	}
	w.Flush()
}

func joinScopes(s []knowmind.Scope) string {
	out := make([]string, len(s))
	for i, sc := range s {
		out[i] = string(sc)
	}
	return strings.Join(out, ",")
}

func expiryNote(t *time.Time) string {
	if t == nil {
		return ", no expiry"
	}
	return ", expires " + t.Format(time.RFC3339)
}

func projectsNote(p []string) string {
	if len(p) == 0 {
		return ", all projects"
	}
	return ", projects " + strings.Join(p, ",")
}

func toolsetsNote(toolsets []string) string {
	if len(toolsets) == 0 {
		return ", default toolsets (" + strings.Join(knowmind.DefaultToolsets, ",") + "; more per request)"
	}
	if len(toolsets) == len(knowmind.AllToolsets) && !slices.ContainsFunc(knowmind.AllToolsets, func(s string) bool { return !slices.Contains(toolsets, s) }) {
		return ", all toolsets"
	}
	return ", toolsets " + strings.Join(toolsets, ",")
}
