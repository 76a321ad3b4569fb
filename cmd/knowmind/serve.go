package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/knowmind/knowmind/handlers"
)

func init() {
	register("serve", "run the MCP service (starts a local Dgraph unless --dgraph is given)", runServe)
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

func runServe(ctx context.Context, args []string) error {
	cfg, err := parseServeFlags(args)
	if err != nil {
		return err
	}
	log := newLogger(cfg.LogLevel)
	e, err := newEmbedder(cfg)
	if err != nil {
		return err
	}
	defer e.Close()
	cfg.embedder = e
	log.Info("embedder", "id", e.ID(), "provider", e.Provider(), "dim", e.Dim())
	b, err := openBackend(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer b.Close()

	var schemaApplied atomic.Bool
	schemaApplied.Store(true) // graph.Open applied it
	ready := func(ctx context.Context) (bool, map[string]string) {
		detail := map[string]string{}
		ok := schemaApplied.Load()
		if b.cluster != nil && !b.cluster.Healthy() {
			ok = false
			detail["managed_dgraph"] = "restarting"
		}
		for alpha, err := range b.client.Ping(ctx) {
			if err != nil {
				ok = false
				detail["alpha "+alpha] = "unreachable"
			} else {
				detail["alpha "+alpha] = "ok"
			}
		}
		return ok, detail
	}

	router := handlers.NewRouter(handlers.Deps{Ready: ready})
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	log.Info("knowmind ready", "mcp", base+"/api/mcp/v1", "readyz", base+"/readyz")
	fmt.Fprintf(os.Stderr, "\nknowmind MCP endpoint: %s/api/mcp/v1 (also %s/mcp)\n\n", base, base)

	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err := <-errc:
		if !errors.Is(err, http.ErrServerClosed) {
			return err
		}
	}
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	_ = srv.Shutdown(sctx)
	return nil
}
