// Package handlers is knowmind's transport: a gin router serving the MCP
// endpoint (Streamable HTTP, JSON-RPC 2.0, protocol 2025-06-18), health
// probes, bearer-token authentication and the mapping of domain errors to
// the spec's JSON-RPC and HTTP codes (errors.go).
//
// It knows MCP and HTTP, not DQL: tenant data goes only through
// (*service).tenant, which takes the tenant from the authenticated token and
// returns the root package's knowmind.Workspace (services.go, one small
// interface per capability; package graph implements them, tests may fake
// them). A tool that needs a new graph.Tenant method adds it to the interface
// of its capability there.
//
// Files: mcp.go (the endpoint around the MCP SDK: origin, auth, rate limit,
// protocol fixes, JSON or SSE answers), auth.go (kmt_ tokens and JWTs, 401,
// RFC 9728 metadata), ratelimit.go, tools.go (the tool list and the
// machinery: scope checks, tools/list filtering, tenant), toolsets.go (which
// toolsets a request reaches), params.go (argument
// decoding, validation and input schema), errors.go, engine_tools.go (the
// memory engine's toolset: extractors, the domain vocabulary in descriptions),
// and one file per tool.
//
// # Adding a tool
//
// A tool is one file, handlers/<tool>.go, holding everything about it: its
// declaration (name, title, description, scope, toolset, annotations), its
// params struct, its result struct and its handler. handlers/stats.go in full,
// after its imports:
//
//	// statsTool declares knowmind_stats (tools.go: toolList).
//	var statsTool = declare(tool{
//		Name:        "knowmind_stats",
//		Title:       "Corpus statistics",
//		Description: "Counts of the workspace's memories, relations and indexed chunks.",
//		Scope:       knowmind.ScopeRead,
//		ReadOnly:    true,
//		Toolset:     knowmind.ToolsetMemory,
//	}, (*service).stats)
//
//	// StatsParams: knowmind_stats takes no parameters.
//	type StatsParams struct{}
//
//	// StatsResult counts the workspace's memories, edges and chunks.
//	type StatsResult = knowmind.Stats
//
//	// stats reports the corpus size of the caller's tenant.
//	func (s *service) stats(ctx context.Context, _ StatsParams) (StatsResult, error) {
//		t, err := s.tenant(ctx)
//		if err != nil {
//			return StatsResult{}, err
//		}
//		return t.Stats(ctx)
//	}
//
// and one line in toolList (tools.go): statsTool. Registration, tools/list,
// the toolsets and initialize's instructions read that list; a test fails
// when a declared tool is missing from it or belongs to no toolset, and
// another when this example and stats.go differ.
//
// A description says when to use the tool rather than its neighbours, in a
// sentence or two: tools/list for the default toolset must stay within 3,000
// tokens (TestToolListSize prints the sizes).
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
//   - Text from configuration (relation shapes, extractors) joins the
//     description through More; the domain vocabulary through Vocabulary.
//   - Results must never be nil slices where the spec shows arrays.
package handlers
