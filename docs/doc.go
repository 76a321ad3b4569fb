// Package docs holds knowmind's documentation for people: analysts.md (the
// graph as Ratel shows it) and the DQL queries under queries/.
//
// Its Go code is tests only: they seed an example tenant on a real Dgraph
// and run every query file, and check that the markdown and the files say
// the same, so the documentation cannot rot. It knows the graph only as an
// analyst does: through DQL and a namespace login.
package docs
