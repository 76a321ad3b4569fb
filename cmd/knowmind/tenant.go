package main

import (
	"context"
	"errors"
	"fmt"
	"os"
)

func init() {
	register("tenant", "tenant list | tenant credentials --tenant NAME (Ratel login of a tenant's namespace)", runTenant)
}

// runTenant takes serve's flags and environment (so it reaches the same
// Dgraph) plus --tenant.
func runTenant(ctx context.Context, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "credentials") {
		return errors.New("usage: knowmind tenant list | knowmind tenant credentials --tenant NAME [serve flags]")
	}
	sub := args[0]
	tenant, rest := takeStringFlag(args[1:], "tenant", "")
	cfg, err := parseServeFlags(rest)
	if err != nil {
		return err
	}
	// Reading credentials needs no embedder; do not refuse tenants whose
	// vectors came from another one.
	cfg.skipTenantCheck = true
	b, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel))
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
		return errors.New("tenant credentials: --tenant is required")
	}
	cred, err := b.client.NamespaceCredentials(ctx, tenant)
	if err != nil {
		return err
	}
	fmt.Printf("tenant:    %s\nnamespace: %d\nuser:      %s\npassword:  %s\n", cred.Tenant, cred.Namespace, cred.User, cred.Password)
	fmt.Fprintf(os.Stderr, "\nRatel: open http://localhost:8000, connect to the alpha's HTTP address (http://localhost:8080),\n"+
		"then Login with namespace %d, user %s and this password. The login sees tenant %q only;\n"+
		"it can also write, so hand it only to people trusted with the tenant's data (docs/analysts.md).\n",
		cred.Namespace, cred.User, cred.Tenant)
	return nil
}
