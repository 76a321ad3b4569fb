package graph

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// Requests that never reached an alpha — a refused port, a name that does
// not resolve (a killed container's name on a compose network) — are the
// ones the failover client may send elsewhere. The errors come from a real
// gRPC client, so a change in gRPC's wording fails here, not in production.
func TestNeverSentRecognisesDialAndResolverErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	refused := l.Addr().String()
	l.Close()
	for name, target := range map[string]string{
		"connection refused": refused,
		"unresolvable name":  "passthrough-not:0",
		"name not found":     "dns:///knowmind-no-such-alpha.invalid:9080",
	} {
		t.Run(name, func(t *testing.T) {
			conn, err := grpc.NewClient(target, grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Skipf("gRPC refused the target itself: %v", err)
			}
			defer conn.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			defer cancel()
			_, err = api.NewDgraphClient(conn).CheckVersion(ctx, &api.Check{})
			if ctx.Err() != nil {
				t.Skipf("no answer within 15 s (resolver without network): %v", err)
			}
			if !neverSent(err) {
				t.Fatalf("neverSent(%v) = false; the failover client would not move this request to another alpha", err)
			}
		})
	}
}
