package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/handlers"
	"github.com/knowmind/knowmind/oauth"
)

// newServiceLogger is serve's and stdio's logger: text or JSON lines on
// stderr (stdout may be the stdio transport), each line of a call carrying
// its request id.
func newServiceLogger(level, format string, w io.Writer) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level %q: want debug, info, warn or error", level)
	}
	opts := &slog.HandlerOptions{Level: l}
	var h slog.Handler
	switch format {
	case "", "text":
		h = slog.NewTextHandler(w, opts)
	case "json":
		opts.ReplaceAttr = durationsInMs
		h = slog.NewJSONHandler(w, opts)
	default:
		return nil, fmt.Errorf("--log-format %q: want text or json", format)
	}
	return slog.New(handlers.RequestIDLogHandler(h)), nil
}

// durationsInMs writes a duration as milliseconds in JSON logs (slog's JSON
// handler writes nanoseconds, which log pipelines read as a bare number):
// the key gains _ms unless it names the unit already.
func durationsInMs(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() != slog.KindDuration {
		return a
	}
	key := a.Key
	if !strings.HasSuffix(key, "_ms") && key != "ms" {
		key += "_ms"
	}
	return slog.Float64(key, float64(a.Value.Duration().Microseconds())/1000)
}

// serveMetrics serves /metrics on its own address (not the MCP one, so it
// can stay on a private interface) until ctx ends.
func serveMetrics(ctx context.Context, addr string, m *handlers.Metrics, log *slog.Logger) (func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics listener", "err", err)
		}
	}()
	log.Info("metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}, nil
}

// oauthVerifier builds the resource server's verifier from --oauth-*; nil
// without --oauth-issuer.
func oauthVerifier(cfg Config, log *slog.Logger) (*oauth.Verifier, error) {
	if cfg.OAuthIssuer == "" {
		return nil, nil
	}
	aud := cfg.OAuthAudience
	if len(aud) == 0 {
		if cfg.PublicURL == "" {
			return nil, errors.New("--oauth-issuer needs --oauth-audience or --public-url (the audience its tokens are issued for)")
		}
		base := strings.TrimRight(cfg.PublicURL, "/")
		aud = []string{base + "/api/mcp/v1", base + "/mcp", base}
	}
	scopeMap, err := parseScopeMap(cfg.OAuthScopeMap)
	if err != nil {
		return nil, err
	}
	v, err := oauth.New(oauth.Config{Issuer: cfg.OAuthIssuer, Audiences: aud, TenantClaim: cfg.OAuthTenantClaim,
		DefaultTenant: cfg.OAuthTenant, ScopeMap: scopeMap, Logger: log})
	if err != nil {
		return nil, err
	}
	return v, nil
}

// parseScopeMap reads "theirs=ours,..."; "" = nil (the identity map).
func parseScopeMap(s string) (map[string]knowmind.Scope, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]knowmind.Scope{}
	for _, pair := range splitList(s) {
		theirs, ours, ok := strings.Cut(pair, "=")
		sc, valid := knowmind.ParseScope(strings.TrimSpace(ours))
		if !ok || strings.TrimSpace(theirs) == "" || !valid {
			return nil, fmt.Errorf("--oauth-scope-map %q: want issuer-scope=read|write|admin pairs", pair)
		}
		out[strings.TrimSpace(theirs)] = sc
	}
	return out, nil
}
