package graph

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Every round trip to Dgraph has a deadline, so a paused or wedged alpha
// (SIGSTOP, a stuck disk, a partition that drops packets instead of refusing
// them) turns into an error the caller can answer with 503 rather than a
// request that waits as long as the client does. A caller's own shorter
// deadline wins.
const (
	// DefaultRPCTimeout bounds one query, mutation, commit or login: well
	// under the minute MCP clients commonly wait for an answer, and far
	// above what a healthy alpha needs for the largest request the service
	// sends (docs/dgraph-notes.md has the measured latencies).
	DefaultRPCTimeout = 30 * time.Second
	// alterTimeout bounds a schema change. A foreground index build over a
	// large tenant runs inside one Alter; builds of the vector index run in
	// the background (indexbuild.go) and return at once.
	alterTimeout = 30 * time.Minute
)

// rpcDeadlines gives each unary call to Dgraph the deadline of its kind:
// timeout for everything but Alter, alterTimeout for Alter. timeout <= 0
// leaves calls without a deadline of their own (a command that runs one
// long bulk load may want that).
func rpcDeadlines(timeout time.Duration) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
		cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		d := timeout
		if strings.HasSuffix(method, "/Alter") {
			d = alterTimeout
		}
		if d > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, d)
			defer cancel()
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

// Unreachable reports whether err says that Dgraph did not answer: a round
// trip's deadline passed or no alpha could be reached. The service answers
// such a failure as unavailable (retry later), not as an internal error.
func Unreachable(err error) bool {
	switch status.Code(err) {
	case codes.DeadlineExceeded, codes.Unavailable:
		return true
	}
	return false
}
