// Package deploy holds how knowmind is shipped: the service image
// (deploy/Dockerfile), the cluster variant of the compose file
// (deploy/compose.cluster.yml, the single-alpha one is docker-compose.yml at
// the top level), the .env template, and the Dgraph build module
// (deploy/dgraph, a separate Go module).
//
// Its Go code is tests only: they parse the compose files and the Dockerfile
// and check them against the service's flags and the pinned Dgraph version,
// without Docker; one more test brings the stack up where a Docker engine is
// available. It must not know anything of the service's internals beyond its
// command line.
package deploy
