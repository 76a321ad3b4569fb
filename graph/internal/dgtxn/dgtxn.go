// Package dgtxn runs read-write Dgraph transactions with retries, for package graph and its
// subpackages (graph/dql): graph itself exports no dgo types, so the helper they share lives
// here, under graph/internal, where nothing outside graph can import it.
package dgtxn

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/dgraph-io/dgo/v240"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Run runs fn in a read-write transaction and commits it (fn must not use
// CommitNow), retrying when Dgraph aborts it for a conflict: parallel upserts
// abort each other, writes to the vector index more often still
// (docs/dgraph-notes.md "Writes"), hence 20 attempts, ~15 s at most. fn must
// be safe to run again.
func Run(ctx context.Context, dg *dgo.Dgraph, fn func(ctx context.Context, txn *dgo.Txn) error) error {
	var err error
	for attempt := 0; attempt < 20; attempt++ {
		txn := dg.NewTxn()
		committing := false
		err = fn(ctx, txn)
		if err == nil {
			committing = true
			err = txn.Commit(ctx)
		}
		txn.Discard(ctx)
		if err == nil {
			return nil
		}
		// An alpha that went away before the commit leaves nothing committed,
		// so the whole transaction can run again (on another alpha). After a
		// commit was sent the outcome is unknown: no retry.
		if !isRetryable(err) && (committing || !Unavailable(err)) {
			return err
		}
		// Jittered backoff so competing writers do not collide again.
		d := time.Duration(10*(1<<min(attempt, 6))) * time.Millisecond
		d += time.Duration(rand.Int64N(int64(d)))
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(d):
		}
	}
	return err
}

// Unavailable reports an error saying the alpha could not be reached.
func Unavailable(err error) bool {
	return status.Code(err) == codes.Unavailable
}

func isRetryable(err error) bool {
	if errors.Is(err, dgo.ErrAborted) {
		return true
	}
	s := err.Error()
	return strings.Contains(s, "Transaction has been aborted") || strings.Contains(s, "Please retry")
}
