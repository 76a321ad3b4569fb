package main

import (
	"context"
	"errors"
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
	token, args := takeStringFlag(args, "token", os.Getenv("KNOWMIND_TOKEN"))
	tenant, args := takeStringFlag(args, "tenant", "")
	scopes, args := takeStringFlag(args, "scopes", "read,write")
	if (token == "") == (tenant == "") {
		return errors.New("stdio: give either --token or --tenant\n\n" + stdioUsage)
	}
	cfg, err := parseServeFlags(args)
	if err != nil {
		return err
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
	e, err := newEmbedder(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	cfg.embedder = e
	b, err := openBackend(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer b.Close()
	if token != "" {
		verify := func(ctx context.Context) (knowmind.Principal, error) {
			tok, err := b.client.VerifyToken(ctx, token)
			if err != nil {
				return knowmind.Principal{}, err
			}
			return tok.Principal(), nil
		}
		if caller.Principal, err = verify(ctx); err != nil {
			return fmt.Errorf("stdio: --token: %w", err)
		}
		caller.Verify = verify
	}
	log.Info("knowmind stdio", "tenant", caller.Principal.Tenant, "scopes", caller.Principal.Scopes)
	return handlers.ServeStdio(ctx, handlers.Deps{Graph: b.client, Logger: log,
		Extractors: extractors, Vocabulary: shapesVocabulary(cfg.ShapesDir)}, caller, &mcp.StdioTransport{})
}
