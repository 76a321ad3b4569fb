// Package schema holds knowmind's Dgraph schema as DQL files, embedded into
// the binary and applied idempotently at start by package graph.
//
// tenant.dql is applied in every tenant namespace, galaxy.dql in the default
// namespace that holds tenants and tokens. Bump Version whenever a file
// changes so graph can record it and a later version can migrate.
package schema

import _ "embed"

// Version of the schema; recorded as Meta.schema_version in each namespace.
const Version = 12 // 2: tuned HNSW build options; 3: notes, projects, revisions; 4: memory engine (entities, drafts, calibration); 5: Memory.preview; 6: Project.aliases; 7: Dgraph's default HNSW build options, Meta.schema_sha; 8: relations follow the current version (a one-time move on open); 9: note revisions searchable as of their time (Revision.text, Revision.path, a one-time backfill on open); 10: Memory.dates (filled on open for memories written before); 11: Memory.sequence, Memory.position (nothing to fill: memories written before are in no sequence); 12: Token.origin (a token copied to another cell keeps its principal)

// Tenant is the DQL schema of a tenant namespace (without relation predicates,
// which come from shapes/).
//
//go:embed tenant.dql
var Tenant string

// Galaxy is the DQL schema of the default namespace.
//
//go:embed galaxy.dql
var Galaxy string
