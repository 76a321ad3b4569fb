// Package dql is a raw DQL connection to one tenant's namespace, logged in with the tenant's
// credentials as an analyst would be (graph.Client.NamespaceCredentials): for the benchmark's
// fast loader and the DQL it sends without the service, and for tests that build data in the
// shapes the service writes. The service never uses it, and writes through it pass no guard
// (graph/guard.go), so only code that builds its own data does.
//
// It hands out no dgo types: outside package graph and its subpackages nothing imports dgo.
package dql

import (
	"context"
	"fmt"

	"github.com/dgraph-io/dgo/v240"
	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/internal/dgtxn"
)

// Conn is a client on one namespace.
type Conn struct {
	dg    *dgo.Dgraph
	owned bool // Close closes dg
}

// Dial connects to alphas (round robin) and logs into cred's namespace.
func Dial(ctx context.Context, alphas []string, cred graph.NamespaceCredentials) (*Conn, error) {
	dg, err := dgo.NewRoundRobinClient(alphas,
		dgo.WithGrpcOption(grpc.WithTransportCredentials(insecure.NewCredentials())),
		dgo.WithGrpcOption(grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20))))
	if err != nil {
		return nil, err
	}
	if err := dg.LoginIntoNamespace(ctx, cred.User, cred.Password, cred.Namespace); err != nil {
		dg.Close()
		return nil, fmt.Errorf("login into namespace %d (%s): %w", cred.Namespace, cred.Tenant, err)
	}
	return &Conn{dg: dg, owned: true}, nil
}

// Wrap is a Conn on a client the caller owns (graph/dgraphtest's).
func Wrap(dg *dgo.Dgraph) *Conn { return &Conn{dg: dg} }

// Close closes a dialed connection.
func (c *Conn) Close() {
	if c.owned {
		c.dg.Close()
	}
}

// Query runs q read-only with vars and returns Dgraph's JSON.
func (c *Conn) Query(ctx context.Context, q string, vars map[string]string) ([]byte, error) {
	return c.ReadOnly().Query(ctx, q, vars)
}

// ReadOnly starts a read-only transaction: its queries read one snapshot.
func (c *Conn) ReadOnly() *ReadTxn { return &ReadTxn{txn: c.dg.NewReadOnlyTxn()} }

// ReadTxn is a read-only transaction.
type ReadTxn struct{ txn *dgo.Txn }

// Query runs q with vars (none: nil) in the transaction and returns Dgraph's JSON.
func (r *ReadTxn) Query(ctx context.Context, q string, vars map[string]string) ([]byte, error) {
	var resp *api.Response
	var err error
	if vars == nil {
		resp, err = r.txn.Query(ctx, q)
	} else {
		resp, err = r.txn.QueryWithVars(ctx, q, vars)
	}
	if err != nil {
		return nil, err
	}
	return resp.Json, nil
}

// SetJSON writes body (a JSON object or array) in one transaction, run again when Dgraph aborts
// it for a conflict (dgtxn.Run).
func (c *Conn) SetJSON(ctx context.Context, body []byte) error {
	return c.mutate(ctx, &api.Mutation{SetJson: body})
}

// SetNquads writes nquads in one transaction, as SetJSON.
func (c *Conn) SetNquads(ctx context.Context, nquads []byte) error {
	return c.mutate(ctx, &api.Mutation{SetNquads: nquads})
}

func (c *Conn) mutate(ctx context.Context, mu *api.Mutation) error {
	return dgtxn.Run(ctx, c.dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Mutate(ctx, mu)
		return err
	})
}

// Upsert runs query with vars and then nquads (which may name its variables, uid(v)) in one
// transaction, as SetJSON.
func (c *Conn) Upsert(ctx context.Context, query string, vars map[string]string, nquads []byte) error {
	req := &api.Request{Query: query, Vars: vars, Mutations: []*api.Mutation{{SetNquads: nquads}}}
	return dgtxn.Run(ctx, c.dg, func(ctx context.Context, txn *dgo.Txn) error {
		_, err := txn.Do(ctx, req)
		return err
	})
}

// Alter applies a schema change (predicates and types in DQL schema syntax).
func (c *Conn) Alter(ctx context.Context, schema string) error {
	return c.dg.Alter(ctx, &api.Operation{Schema: schema})
}
