//go:build tools

// Package compose pins the Docker Compose v2 CLI that the docker stack tests
// (deploy/stack_test.go, KNOWMIND_TEST_DOCKER=1) build into bin/docker-compose.
// It lives in its own module, like deploy/dgraph, so Compose's dependency
// graph never enters the service's go.mod.
package compose

import _ "github.com/docker/compose/v2/cmd"
