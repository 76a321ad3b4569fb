package handlers

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
)

// DefaultSessionsPerToken bounds the MCP sessions one token holds open in the
// Streamable HTTP handler. Each costs memory until it idles out
// (sessionIdle), and a client that never sends DELETE — or a token
// opening sessions in a loop — would otherwise grow the process without
// bound. Opening one more closes the token's least recently used session.
const DefaultSessionsPerToken = 32

// sessionLimit tracks the live sessions of each token (by TokenInfo.UserID).
type sessionLimit struct {
	max     int
	mu      sync.Mutex
	byToken map[string][]*heldSession
}

type heldSession struct {
	id   string
	ti   *auth.TokenInfo // the token it belongs to, for closing it
	used time.Time
}

func newSessionLimit(max int) *sessionLimit {
	if max == 0 {
		max = DefaultSessionsPerToken
	}
	return &sessionLimit{max: max, byToken: map[string][]*heldSession{}}
}

// opened records a new session and returns the sessions of the same token
// to close: those beyond the bound, least recently used first. Sessions the
// SDK has idled out are forgotten here too.
func (l *sessionLimit) opened(ti *auth.TokenInfo, id string, now time.Time) []*heldSession {
	if l.max < 0 || id == "" {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.byToken[ti.UserID][:0]
	for _, s := range l.byToken[ti.UserID] {
		if now.Sub(s.used) < sessionIdle {
			held = append(held, s)
		}
	}
	held = append(held, &heldSession{id: id, ti: ti, used: now})
	var evict []*heldSession
	for len(held) > l.max {
		oldest := 0
		for i, s := range held {
			if s.used.Before(held[oldest].used) {
				oldest = i
			}
		}
		evict = append(evict, held[oldest])
		held = append(held[:oldest], held[oldest+1:]...)
	}
	l.byToken[ti.UserID] = held
	return evict
}

// used marks a session as just used (a request carried its id).
func (l *sessionLimit) used(ti *auth.TokenInfo, id string, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, s := range l.byToken[ti.UserID] {
		if s.id == id {
			s.used = now
		}
	}
}

// closed forgets a session its client ended (DELETE).
func (l *sessionLimit) closed(ti *auth.TokenInfo, id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	held := l.byToken[ti.UserID]
	for i, s := range held {
		if s.id == id {
			l.byToken[ti.UserID] = append(held[:i], held[i+1:]...)
			break
		}
	}
	if len(l.byToken[ti.UserID]) == 0 {
		delete(l.byToken, ti.UserID)
	}
}

// closeSessions ends sessions in the SDK's handler as the client's DELETE would.
func (e *endpoint) closeSessions(evict []*heldSession) {
	for _, s := range evict {
		ctx := context.WithValue(context.Background(), tokenInfoKey{}, s.ti)
		r, err := http.NewRequestWithContext(ctx, http.MethodDelete, mcpPath, nil)
		if err != nil {
			continue
		}
		r.Header.Set("Authorization", "Bearer session-bound") // read from the context by withTokenInfo
		r.Header.Set(sessionHeader, s.id)
		out := &sseBuffer{header: http.Header{}}
		e.sessions.ServeHTTP(out, r)
		if out.status >= 300 && out.status != http.StatusNotFound {
			e.log.Error("closing an mcp session over the bound", "session", s.id, "status", out.status, "body", out.body.String())
			continue
		}
		e.log.Info("mcp session closed: its token holds the most sessions allowed", "session", s.id, "token", s.ti.UserID,
			"max", e.sessionLimit.max)
	}
}
