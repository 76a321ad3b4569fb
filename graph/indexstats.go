package graph

import (
	"context"
	"strings"
	"time"

	"google.golang.org/grpc"
)

// IndexSize is what the service holds in memory for one tenant's recall:
// the BM25 statistics' memories and chunks, and the exact-search vectors.
type IndexSize struct {
	Tenant      string
	Memories    int // memories in the BM25 statistics
	Vectors     int // chunk vectors held for exact vector search
	VectorBytes int // their memory: 4·dim bytes each
}

// IndexSizes reports every open tenant's in-process indexes (for metrics).
func (c *Client) IndexSizes() []IndexSize {
	c.mu.Lock()
	tenants := make([]*Tenant, 0, len(c.tenants))
	for _, t := range c.tenants {
		tenants = append(tenants, t)
	}
	c.mu.Unlock()
	out := make([]IndexSize, 0, len(tenants))
	for _, t := range tenants {
		t.text.mu.Lock()
		memories := len(t.text.memories)
		t.text.mu.Unlock()
		t.text.vec.mu.RLock()
		vectors, dim := len(t.text.vec.uids), t.text.vec.dim
		t.text.vec.mu.RUnlock()
		out = append(out, IndexSize{Tenant: t.Name, Memories: memories, Vectors: vectors, VectorBytes: 4 * dim * vectors})
	}
	return out
}

// observeRPCs reports each gRPC round trip to Dgraph (method without the
// service prefix, e.g. "Query") to observe.
func observeRPCs(observe func(method string, d time.Duration, err error)) grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
		cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		observe(method[strings.LastIndexByte(method, '/')+1:], time.Since(start), err)
		return err
	})
}
