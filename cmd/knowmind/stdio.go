package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/handlers"
)

func init() {
	register("stdio", "serve the MCP tools over stdin/stdout for a desktop client (--token kmt_… or --tenant NAME --scopes read,write)", runStdio)
}

const stdioUsage = `usage:
  knowmind stdio --token kmt_…                        the token's tenant and scopes (env KNOWMIND_TOKEN)
  knowmind stdio --tenant NAME [--scopes read,write]   an operator's local access (made on first use)
plus serve's flags to reach the store (--data-dir, or --dgraph for an external cluster).
Logs go to stderr; stdout carries MCP messages only.`

// runStdio serves the same tools as `serve`, against the same store, over
// MCP's stdio transport. With a token every call is checked against the
// store, so revocation works as over HTTP.
func runStdio(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
	tokenFlag := fs.String("token", os.Getenv("KNOWMIND_TOKEN"), "a knowmind token: its tenant and scopes (env KNOWMIND_TOKEN)")
	tenantFlag := fs.String("tenant", "", "an operator's local access to this tenant (made on first use)")
	scopesFlag := fs.String("scopes", "read,write", "scopes of --tenant")
	cfg, pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	token, tenant, scopes := *tokenFlag, *tenantFlag, *scopesFlag
	// Messages name where the token came from, so a stale KNOWMIND_TOKEN in
	// a desktop client's config is not mistaken for a flag nobody passed.
	tokenFrom := "KNOWMIND_TOKEN"
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "token" {
			tokenFrom = "--token"
		}
	})
	if (token == "") == (tenant == "") || len(pos) > 0 {
		fmt.Fprintln(os.Stderr, stdioUsage)
		if token != "" && tenant != "" {
			return fmt.Errorf("stdio: a token (%s) and --tenant: give one", tokenFrom)
		}
		return errors.New("stdio: give either --token (or KNOWMIND_TOKEN) or --tenant")
	}
	log, err := newServiceLogger(cfg.LogLevel, cfg.LogFormat, os.Stderr)
	if err != nil {
		return err
	}
	caller := handlers.LocalCaller{CreateTenant: token == ""}
	if tenant != "" {
		if err := graph.ValidTenantName(tenant); err != nil {
			return fmt.Errorf("stdio: --tenant: %w", err)
		}
		caller.Principal = knowmind.Principal{Tenant: tenant, TokenID: "stdio:" + tenant}
		for _, s := range splitList(scopes) {
			sc, ok := knowmind.ParseScope(s)
			if !ok {
				return fmt.Errorf("stdio: unknown scope %q (read, write, admin)", s)
			}
			caller.Principal.Scopes = append(caller.Principal.Scopes, sc)
		}
	}
	extractors, err := newExtractors(cfg)
	if err != nil {
		return err
	}
	b, err := openBackend(ctx, cfg, log, opening{embedder: true, reranker: true, wordLevels: true, watchIndexBuilds: true, takeOver: true, snapshots: true})
	if err != nil {
		return err
	}
	defer b.Close()
	// Routed like serve: the tenant is served from the cell the directory places it in, its token
	// is checked there, and a move's read-only mark holds this process's writes as a serve's.
	serving, err := openServing(cfg, b, log)
	if err != nil {
		return err
	}
	defer serving.Close()
	if token != "" {
		verify := func(ctx context.Context) (knowmind.Principal, error) {
			tok, err := serving.VerifyToken(ctx, token)
			if err != nil {
				return knowmind.Principal{}, err
			}
			return tok.Principal(), nil
		}
		if caller.Principal, err = verify(ctx); err != nil {
			return fmt.Errorf("stdio: the token from %s: %w", tokenFrom, err)
		}
		caller.Verify = verify
	}
	if token != "" {
		log.Info("knowmind stdio", "tenant", caller.Principal.Tenant, "scopes", caller.Principal.Scopes,
			"token", caller.Principal.TokenID, "token_from", tokenFrom)
	} else {
		log.Info("knowmind stdio", "tenant", caller.Principal.Tenant, "scopes", caller.Principal.Scopes)
	}
	return handlers.ServeStdio(ctx, handlers.Deps{Graph: b.client, Workspaces: serving, Logger: log,
		Extractors: extractors, Vocabulary: shapesVocabulary(cfg.ShapesDir)}, caller, &mcp.StdioTransport{})
}
