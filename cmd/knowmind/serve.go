package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
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
	log, err := newServiceLogger(cfg.LogLevel, cfg.LogFormat, os.Stderr)
	if err != nil {
		return err
	}
	issuer, err := oauthVerifier(cfg, log)
	if err != nil {
		return err
	}
	// Metrics exist from the start so Dgraph's round trips are observed from
	// the first; the index gauges read the client once it is open.
	var indexSizes func() []graph.IndexSize
	metrics := handlers.NewMetrics(func() []graph.IndexSize {
		if indexSizes == nil {
			return nil
		}
		return indexSizes()
	})
	extractors, err := newExtractors(cfg)
	if err != nil {
		return err
	}
	b, err := openBackend(ctx, cfg, log, opening{embedder: true, reranker: true, wordLevels: true, observeRPC: metrics.ObserveDgraph, watchIndexBuilds: true, takeOver: true,
		snapshots: true, observeSnapshot: metrics.ObserveSnapshotLoad})
	if err != nil {
		return err
	}
	defer b.Close()
	indexSizes = b.client.IndexSizes
	metrics.WatchDgraph(b.client.Ping)

	// The schema was applied by openBackend before we got here; ready means
	// the managed Dgraph is healthy and every alpha answers.
	ready := func(ctx context.Context) (bool, map[string]string) {
		ok, detail := alphaQuorum(b.client.Ping(ctx))
		if c := b.managed(); c != nil && !c.Healthy() {
			ok = false
			detail["managed_dgraph"] = "restarting"
			if reason := c.CrashLoop(); reason != "" {
				detail["managed_dgraph"] = "crash_loop: " + reason
			}
		}
		return ok, detail
	}

	jwtCfg, err := jwtConfig(cfg)
	if err != nil {
		return err
	}
	// Tenants are served in the cell the directory names (docs/scale.md, "cells"), and a token
	// is verified by its row in its tenant's cell.
	serving, err := openServing(cfg, b, log)
	if err != nil {
		return err
	}
	defer serving.Close()
	router := handlers.NewRouter(handlers.Deps{
		Ready: ready, Graph: b.client, Workspaces: serving, Tokens: serving, Logger: log,
		AllowedOrigins: cfg.AllowedOrigins, PublicURL: cfg.PublicURL, JWT: jwtCfg,
		RateLimit: cfg.RateLimit, RateBurst: cfg.RateBurst, TenantRateLimit: cfg.TenantRateLimit, TenantRateBurst: cfg.TenantRateBurst,
		TrustedProxies: cfg.TrustedProxies,
		CallTimeout:    cfg.CallTimeout, TenantInFlight: cfg.TenantInFlight,
		OAuth: issuer, Metrics: metrics, MetricsToken: cfg.MetricsToken,
		Extractors: extractors, Vocabulary: shapesVocabulary(cfg.ShapesDir),
	})
	if cfg.MetricsAddr != "" {
		stop, err := serveMetrics(ctx, cfg.MetricsAddr, metrics, log)
		if err != nil {
			return err
		}
		defer stop()
	}
	if issuer != nil {
		// Early word on a misconfigured issuer; tokens fetch again anyway.
		go func() {
			if err := issuer.Prefetch(ctx); err != nil {
				log.Warn("oauth issuer keys not fetched yet", "issuer", issuer.Issuer(), "err", err)
			}
		}()
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	srv := &http.Server{Handler: router, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	base := "http://" + ln.Addr().String()
	// Before serving: once /readyz answers, the first start's token exists.
	if devTokenAllowed(b.managed() != nil, ln.Addr()) {
		if err := devTokenOnFirstStart(ctx, b.client, base, cfg.DataDir, log); err != nil {
			log.Warn("development token", "err", err)
		}
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	log.Info("knowmind ready", "mcp", base+"/api/mcp/v1", "ui", base+"/ui", "readyz", base+"/readyz")
	if cfg.LogFormat != "json" { // JSON logs are for machines: every line of stderr is one
		fmt.Fprintf(os.Stderr, "\nknowmind MCP endpoint: %s/api/mcp/v1 (also %s/mcp)\ngraph explorer:        %s/ui\n\n", base, base, base)
	}
	if cfg.WarmTextStats {
		// In the background, once serving: a recall arriving meanwhile waits for its tenant's
		// load as it would without the warm-up. Stopped and awaited before the client closes.
		warmCtx, stopWarm := context.WithCancel(ctx)
		warmed := make(chan struct{})
		go func() {
			defer close(warmed)
			b.client.WarmTextStats(warmCtx)
		}()
		defer func() {
			stopWarm()
			<-warmed
		}()
	}

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

// jwtConfig reads the JWT settings; JWTs stay off unless a secret or keys
// are configured.
func jwtConfig(cfg Config) (handlers.JWTConfig, error) {
	j := handlers.JWTConfig{Secret: []byte(cfg.JWTSecret), Audience: cfg.JWTAudience, Issuer: cfg.JWTIssuer,
		TenantClaim: cfg.JWTTenantClaim, CreateTenants: cfg.JWTCreateTenants}
	if cfg.JWTPublicKeys != "" {
		data, err := os.ReadFile(cfg.JWTPublicKeys)
		if err != nil {
			return j, fmt.Errorf("--jwt-public-keys: %w", err)
		}
		if j.PublicKeys, err = handlers.ParsePublicKeys(data); err != nil {
			return j, fmt.Errorf("--jwt-public-keys %s: %w", cfg.JWTPublicKeys, err)
		}
	}
	if len(j.Secret) > 0 && len(j.Secret) < 32 {
		return j, errors.New("--jwt-secret must be at least 32 bytes")
	}
	return j, nil
}

// devTokenTTL is how long the first start's development token is valid.
const devTokenTTL = 7 * 24 * time.Hour

// devTokenAllowed: the development token is made only for `make run` — the
// managed Dgraph, listening on loopback — never for a service others reach
// or one on a production cluster, whose tokens come from `knowmind token create`.
func devTokenAllowed(managed bool, listen net.Addr) bool {
	tcp, ok := listen.(*net.TCPAddr)
	return managed && ok && tcp.IP.IsLoopback()
}

// devTokenOnFirstStart makes `make run` usable at once: on a store without
// any token it creates tenant "dev" with every scope, valid for devTokenTTL. The secret goes to the
// terminal when stderr is one; otherwise (docker logs, systemd journal — files
// someone else may read) only to data-dir/secrets/dev-token (0600), and the
// log names that file.
func devTokenOnFirstStart(ctx context.Context, c *graph.Client, base, dataDir string, log *slog.Logger) error {
	has, err := c.HasTokens(ctx)
	if err != nil || has {
		return err
	}
	expires := time.Now().Add(devTokenTTL).UTC()
	secret, tok, err := c.CreateToken(ctx, "dev", []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite, knowmind.ScopeAdmin}, "development", &expires)
	if err != nil {
		return err
	}
	if fi, err := os.Stderr.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		path := filepath.Join(dataDir, "secrets", "dev-token")
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(secret+"\n"), 0o600); err != nil {
			return err
		}
		log.Info("first start: development token for tenant dev (read, write, admin) written to a file, not to this log",
			"file", path, "token_id", tok.ID, "expires", expires.Format(time.RFC3339))
		return nil
	}
	fmt.Fprintf(os.Stderr, `First start: development token for tenant "dev" (read, write, admin; id %s; valid until %s), shown once:

  %s

Try it:
  curl -s %s/api/mcp/v1 -H 'Authorization: Bearer %s' \
    -H 'Content-Type: application/json' -H 'Accept: application/json' \
    -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"knowmind_health","arguments":{}}}'

More tokens: knowmind token create --tenant acme --scopes read,write   (revoke: knowmind token revoke ID)

`, tok.ID, expires.Format(time.RFC3339), secret, base, secret)
	return nil
}

// alphaQuorum: the service is ready while a majority of its alphas answer. Requests fail over
// to the alphas that answer (graph/failover.go) and a replicated group commits with a
// majority, so one alpha down of three still serves every call; saying "not ready" then would
// make an orchestrator take a working service out of rotation.
func alphaQuorum(pings map[string]error) (bool, map[string]string) {
	detail := make(map[string]string, len(pings))
	up := 0
	for alpha, err := range pings {
		if err != nil {
			detail["alpha "+alpha] = "unreachable"
		} else {
			detail["alpha "+alpha] = "ok"
			up++
		}
	}
	return len(pings) > 0 && 2*up > len(pings), detail
}
