// Package handlers is knowmind's transport: a gin router serving the MCP
// endpoint (one file per MCP tool), health probes, and the mapping of domain
// errors to the spec's JSON-RPC and HTTP codes (errors.go).
//
// It knows MCP and HTTP, not DQL: storage goes through package graph.
package handlers

import (
	"context"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// Readiness reports whether the service can serve requests, with a detail per
// dependency (e.g. one entry per Dgraph alpha) for /readyz.
type Readiness func(ctx context.Context) (ready bool, detail map[string]string)

// Deps are what the router needs; cmd/knowmind fills them.
type Deps struct {
	Ready Readiness
}

// NewRouter builds the HTTP handler.
func NewRouter(d Deps) *gin.Engine {
	gin.SetMode(gin.ReleaseMode)
	r := gin.New()
	r.Use(gin.Recovery())
	// Liveness: the process is up and serving HTTP.
	r.GET("/healthz", func(c *gin.Context) { c.JSON(http.StatusOK, gin.H{"status": "ok"}) })
	// Readiness: Dgraph reachable and schema applied.
	r.GET("/readyz", func(c *gin.Context) {
		ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
		defer cancel()
		ok, detail := d.Ready(ctx)
		status := http.StatusOK
		state := "ready"
		if !ok {
			status, state = http.StatusServiceUnavailable, "not_ready"
		}
		c.JSON(status, gin.H{"status": state, "checks": detail})
	})
	return r
}
