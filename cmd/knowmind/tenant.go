package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

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

	if sub == "list" {
		names, err := b.client.Tenants(ctx)
		if err != nil {
			return err
		}
		for _, n := range names {
			fmt.Println(n)
		}
		return nil
	}
	if tenant == "" {
		return fmt.Errorf("tenant %s: --tenant is required", sub)
	}
	var cred graph.NamespaceCredentials
	var note string
	if sub == "analyst" {
		cred, err = b.client.AnalystLogin(ctx, tenant)
		note = "It reads every predicate of this tenant and can change nothing. Running this again sets a new password."
	} else {
		cred, err = b.client.NamespaceCredentials(ctx, tenant)
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
