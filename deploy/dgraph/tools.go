//go:build tools

// Package dgraph pins the Dgraph server version that knowmind builds and
// manages. It lives in its own module so Dgraph's large dependency graph
// never enters the service's go.mod.
package dgraph

import _ "github.com/dgraph-io/dgraph/v25/dgraph"
