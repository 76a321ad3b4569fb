// Package handlers is knowmind's transport: a gin router serving the MCP
// endpoint (Streamable HTTP, JSON-RPC 2.0, protocol 2025-06-18), health
// probes, bearer-token authentication and the mapping of domain errors to
// the spec's JSON-RPC and HTTP codes (errors.go).
//
// It knows MCP and HTTP, not DQL: storage goes through package graph, and
// tenant data only through (*service).tenant, which takes the tenant from the
// authenticated token.
//
// Files: mcp.go (the endpoint around the MCP SDK: origin, auth, rate limit,
// protocol fixes, JSON or SSE answers), auth.go (kmt_ tokens and JWTs, 401,
// RFC 9728 metadata), ratelimit.go, tools.go (the tool list and the
// machinery: scope checks, tools/list filtering, tenant), params.go (argument
// decoding, validation and input schema), errors.go, engine_tools.go (the
// memory engine's toolset: extractors, the domain vocabulary in descriptions),
// and one file per tool.
//
// # Adding a tool
//
// Create handlers/<tool>.go with the params struct, the result struct and the
// handler — nothing else:
//
//	// RecallParams are knowmind_recall's parameters.
//	type RecallParams struct {
//		Query string `json:"query" jsonschema:"natural-language question" validate:"required,notblank"`
//		K     *int   `json:"k,omitempty" jsonschema:"number of hits, 1 to 25 (default 5)" validate:"omitnil,min=1,max=25"`
//	}
//
//	// RecallResult is what the tool returns (JSON tags = the spec's names).
//	type RecallResult struct { ... }
//
//	func (s *service) recall(ctx context.Context, p RecallParams) (RecallResult, error) {
//		t, err := s.tenant(ctx) // the caller's tenant; never from arguments
//		if err != nil {
//			return RecallResult{}, err
//		}
//		return t.Recall(ctx, p.Query, intOr(p.K, 5))
//	}
//
// and register it in registerTools (tools.go) with its scope:
//
//	addTool(s, srv, tool{Name: "knowmind_recall", Title: "...", Description: "...",
//		Scope: knowmind.ScopeRead, ReadOnly: true}, s.recall)
//
// Rules the machinery relies on:
//   - Parameters the spec marks required: json tag without omitempty (the
//     schema lists them as required) and validate:"required" (plus notblank
//     for strings). Optional ones: omitempty; optional numbers with a default
//     are pointers (validate:"omitnil,...") resolved with intOr.
//     validate min/max/oneof also become the schema's minimum/maximum/enum.
//   - Argument errors are -32602 naming the parameter before the handler
//     runs; the handler itself returns *knowmind.Error values
//     (knowmind.InvalidParam, knowmind.Internal(ReasonContentRequired, ...),
//     knowmind.Errorf(knowmind.ENOTFOUND, ...)) and errors.go maps them.
//     Any other error is logged and answered -32603 "internal error".
//   - A parameter whose absence the spec answers with something other than
//     -32602 (content → -32603 content_required) is not required in the
//     schema: omitempty, no validate:"required"; the handler checks it.
//   - A tool whose spec answers a missing scope with 403 sets
//     ScopeError: codeForbidden (knowmind_update_fact).
//   - Results must never be nil slices where the spec shows arrays.
package handlers
