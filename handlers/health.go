package handlers

import (
	"context"
	"time"

	"github.com/knowmind/knowmind"
)

// healthTool declares knowmind_health (tools.go: toolList).
var healthTool = declare(tool{
	Name:        "knowmind_health",
	Title:       "Service health",
	Description: "Service status and version; works with every token and returns no workspace data.",
	ReadOnly:    true,
}, (*service).health)

// HealthParams: knowmind_health takes no parameters.
type HealthParams struct{}

// HealthResult is the service status; it carries no tenant data.
type HealthResult struct {
	Status  string `json:"status"`
	Service string `json:"service"`
	Version string `json:"version"`
}

// healthTimeout bounds the readiness check behind knowmind_health: with the
// token lookup before it (tokenLookupTimeout), a paused or unreachable
// Dgraph is answered 503 within 2 s, whatever it does.
const healthTimeout = 900 * time.Millisecond

// health answers "ok" when Dgraph is reachable and 503 otherwise. It needs no
// scope and opens no tenant.
func (s *service) health(ctx context.Context, _ HealthParams) (HealthResult, error) {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	if ok, detail := s.ready(ctx); !ok {
		s.log.WarnContext(ctx, "knowmind_health: not ready", "request_id", requestIDFrom(ctx), "checks", detail)
		return HealthResult{}, knowmind.Errorf(knowmind.EUNAVAILABLE, "service unavailable")
	}
	return HealthResult{Status: "ok", Service: "memory", Version: knowmind.Version}, nil
}
