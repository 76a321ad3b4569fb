package main

import (
	"context"
	"flag"
	"fmt"
	"net"
	"net/http"
	"time"
)

func init() {
	register("healthcheck", "exit 0 if this host's service answers /readyz with 200 (container healthchecks)", runHealthcheck)
}

// runHealthcheck exists because the container image (FROM scratch) has no
// curl or wget: Docker's HEALTHCHECK and compose call the binary itself.
// It reads the same --addr / KNOWMIND_ADDR as serve, so a container that
// moves the port needs no second setting.
func runHealthcheck(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("healthcheck", flag.ContinueOnError)
	addr := fs.String("addr", envOr("addr", "127.0.0.1:8765"), "the service's listen address (env KNOWMIND_ADDR)")
	path := fs.String("path", "/readyz", "probe path: /readyz (Dgraph reachable, schema applied) or /healthz (process up)")
	timeout := fs.Duration("timeout", 4*time.Second, "request timeout")
	if err := fs.Parse(args); err != nil {
		return err
	}
	url := healthURL(*addr, *path)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("healthcheck %s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("healthcheck %s: HTTP %d", url, resp.StatusCode)
	}
	return nil
}

// healthURL turns a listen address into one to dial: a wildcard host
// (0.0.0.0, ::, empty) is reached on loopback.
func healthURL(addr, path string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + path
	}
	switch host {
	case "", "0.0.0.0", "::", "[::]":
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + path
}
