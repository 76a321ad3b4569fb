// A separate module so that knowmind never imports Dgraph: it only regenerates
// ../dgraph_tokens.jsonl (see main.go).
module tokcheck

go 1.26.0

require github.com/dgraph-io/dgraph/v25 v25.2.0

replace github.com/dgraph-io/dgraph/v25 => github.com/hypermodeinc/dgraph/v25 v25.2.0
