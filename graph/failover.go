package graph

import (
	"context"
	"math/rand/v2"
	"strings"

	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"

	"github.com/knowmind/knowmind/graph/internal/dgtxn"
)

// failoverClient spreads requests over the alphas like dgo does, and moves a
// request that found its alpha Unavailable on to the next one where
// repeating it cannot write twice: logins, schema alters (idempotent),
// queries without mutations, and any request that never left this process
// (gRPC fails fast while it cannot dial the alpha). A mutation or commit that
// failed in flight is returned; runTxn retries the whole transaction when
// that happened before the commit, which is safe because nothing of it was
// committed.
//
// Without it, while one of three alphas is down a third of all requests fail
// (measured in graph/localdgraph's failover test).
type failoverClient struct {
	stubs []api.DgraphClient
}

func newFailoverClient(stubs []api.DgraphClient) api.DgraphClient {
	if len(stubs) == 1 {
		return stubs[0]
	}
	return &failoverClient{stubs: stubs}
}

func unavailable(err error) bool { return dgtxn.Unavailable(err) }

// neverSent reports an Unavailable error raised while dialing: the request
// did not reach any alpha, so sending it elsewhere cannot apply it twice.
func neverSent(err error) bool {
	if !unavailable(err) {
		return false
	}
	msg := status.Convert(err).Message()
	// A name that no longer resolves (a killed container leaves the compose
	// network's DNS) fails in the resolver, before any dial: measured in the
	// docker cluster test, where it sent a third of the writes to a dead alpha.
	for _, s := range []string{"while dialing", "connection refused", "produced zero addresses", "name resolver error", "no such host"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// eachUnsent is each for requests that must not be repeated once sent.
func eachUnsent[T any](f *failoverClient, ctx context.Context, fn func(api.DgraphClient) (T, error)) (T, error) {
	start := rand.IntN(len(f.stubs))
	var out T
	var err error
	for i := range f.stubs {
		out, err = fn(f.stubs[(start+i)%len(f.stubs)])
		if !neverSent(err) || ctx.Err() != nil {
			return out, err
		}
	}
	return out, err
}

// each calls fn on every alpha, starting at a random one, until one answers
// with anything other than Unavailable.
func each[T any](f *failoverClient, ctx context.Context, fn func(api.DgraphClient) (T, error)) (T, error) {
	start := rand.IntN(len(f.stubs))
	var out T
	var err error
	for i := range f.stubs {
		out, err = fn(f.stubs[(start+i)%len(f.stubs)])
		if !unavailable(err) || ctx.Err() != nil {
			return out, err
		}
	}
	return out, err
}

func (f *failoverClient) Login(ctx context.Context, in *api.LoginRequest, opts ...grpc.CallOption) (*api.Response, error) {
	return each(f, ctx, func(s api.DgraphClient) (*api.Response, error) { return s.Login(ctx, in, opts...) })
}

func (f *failoverClient) Query(ctx context.Context, in *api.Request, opts ...grpc.CallOption) (*api.Response, error) {
	if len(in.Mutations) > 0 || in.CommitNow {
		return eachUnsent(f, ctx, func(s api.DgraphClient) (*api.Response, error) { return s.Query(ctx, in, opts...) })
	}
	return each(f, ctx, func(s api.DgraphClient) (*api.Response, error) { return s.Query(ctx, in, opts...) })
}

func (f *failoverClient) Alter(ctx context.Context, in *api.Operation, opts ...grpc.CallOption) (*api.Payload, error) {
	if in.DropAll || in.DropAttr != "" || in.DropValue != "" || in.DropOp != api.Operation_NONE {
		return eachUnsent(f, ctx, func(s api.DgraphClient) (*api.Payload, error) { return s.Alter(ctx, in, opts...) })
	}
	return each(f, ctx, func(s api.DgraphClient) (*api.Payload, error) { return s.Alter(ctx, in, opts...) })
}

func (f *failoverClient) CommitOrAbort(ctx context.Context, in *api.TxnContext, opts ...grpc.CallOption) (*api.TxnContext, error) {
	if in.Aborted {
		return each(f, ctx, func(s api.DgraphClient) (*api.TxnContext, error) { return s.CommitOrAbort(ctx, in, opts...) })
	}
	return eachUnsent(f, ctx, func(s api.DgraphClient) (*api.TxnContext, error) { return s.CommitOrAbort(ctx, in, opts...) })
}

func (f *failoverClient) CheckVersion(ctx context.Context, in *api.Check, opts ...grpc.CallOption) (*api.Version, error) {
	return each(f, ctx, func(s api.DgraphClient) (*api.Version, error) { return s.CheckVersion(ctx, in, opts...) })
}
