package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/knowmind/knowmind/graph"
)

func init() {
	register("dgraph-password", "set an external Dgraph's guardian password to --dgraph-password (first run of docker compose)", runDgraphPassword)
}

// defaultGuardianPassword is what every Dgraph cluster started with ACL
// gives groot until someone changes it.
const defaultGuardianPassword = "password"

// runDgraphPassword makes the guardian password of an external cluster the
// configured one: it logs in with --dgraph-password (already set: nothing
// to do) or else with --current (Dgraph's default "password" on a new
// cluster) and changes it. docker compose runs it once before serve, so an
// operator only ever writes the password into .env. It takes serve's flags
// and environment, plus --current.
func runDgraphPassword(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("dgraph-password", flag.ContinueOnError)
	currentFlag := fs.String("current", defaultGuardianPassword, "the guardian password to change (a new cluster's default)")
	waitFlag := fs.Duration("wait", 3*time.Minute, "how long to wait for the cluster to answer")
	cfg, pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return fmt.Errorf("dgraph-password: unexpected arguments %v", pos)
	}
	current, waitFor := *currentFlag, *waitFlag
	if len(cfg.Dgraph) == 0 {
		return errors.New("dgraph-password needs --dgraph / KNOWMIND_DGRAPH: the managed Dgraph sets its own random guardian password (data-dir/secrets/guardian-password)")
	}
	if cfg.DgraphPassword == "" {
		return errors.New("set the new guardian password with --dgraph-password or KNOWMIND_DGRAPH_PASSWORD")
	}
	log := newLogger(cfg.LogLevel)
	gcfg := graph.Config{
		Alphas: cfg.Dgraph, AlphasHTTP: cfg.DgraphHTTP, User: cfg.DgraphUser, Logger: log,
		// Open insists on a secret (it derives tenant passwords); this
		// command touches no tenant, so any value does.
		Secret: []byte("dgraph-password: no tenant access"),
	}
	open := func(password string) (*graph.Client, error) {
		c := gcfg
		c.Password = password
		// Short attempts: a wrong password must not cost Open's full 30 s
		// login retry before the other password is tried.
		octx, cancel := context.WithTimeout(ctx, 8*time.Second)
		defer cancel()
		return graph.Open(octx, c)
	}
	deadline := time.Now().Add(waitFor)
	var errNew, errCur error
	for {
		c, err := open(cfg.DgraphPassword)
		if err == nil {
			c.Close()
			fmt.Fprintln(os.Stderr, "dgraph-password: the guardian password is already the configured one")
			printFirstRunHint()
			return nil
		}
		errNew = err
		if current != cfg.DgraphPassword {
			if c, err := open(current); err == nil {
				err = c.SetGuardianPassword(ctx, cfg.DgraphPassword)
				c.Close()
				if err != nil {
					return err
				}
				fmt.Fprintf(os.Stderr, "dgraph-password: guardian %q now has the configured password\n", cfg.DgraphUser)
				printFirstRunHint()
				return nil
			} else {
				errCur = err
			}
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(2 * time.Second)
	}
	return fmt.Errorf("guardian login failed with the configured password (%v) and with --current (%v); "+
		"if the password was changed by hand, pass it with --current", errNew, errCur)
}

func printFirstRunHint() {
	fmt.Fprint(os.Stderr, `
Next: create the first API token (shown once):
  docker compose exec knowmind knowmind token create --tenant acme --scopes read,write
A read-only login of that tenant for analysts in Ratel (http://localhost:8000):
  docker compose exec knowmind knowmind tenant analyst --tenant acme
`)
}
