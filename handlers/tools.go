package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
)

// registerTools is the list of every MCP tool, its required scope and its
// static description. Names, descriptions and schemas are constants and Go
// types: stored content never flows into them.
func (s *service) registerTools(srv *mcp.Server) {
	addTool(s, srv, tool{
		Name:        "knowmind_health",
		Title:       "Service health",
		Description: "Service status and version. Works with every token and returns no tenant data.",
		ReadOnly:    true,
	}, s.health)
	addTool(s, srv, tool{
		Name:        "knowmind_stats",
		Title:       "Corpus statistics",
		Description: "Corpus statistics of the token's workspace: number of memories, relations (edges) and chunks in the vector index.",
		Scope:       knowmind.ScopeRead,
		ReadOnly:    true,
	}, s.stats)
	addTool(s, srv, tool{
		Name:  "knowmind_list_recent",
		Title: "Recently created entries",
		Description: "The most recently created documents and memories of the workspace, newest first (by created_at). " +
			"Graph entities without a timestamp do not appear, so the count differs from knowmind_stats.",
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.listRecent)
	addTool(s, srv, tool{
		Name:  "knowmind_recall",
		Title: "Recall",
		Description: "Hybrid recall over the workspace's knowledge: full text (BM25, German and English analysis), vectors and " +
			"graph hops over the memories' relations, fused into one ranking. Returns the k best memories or document " +
			"sections with a score in 0..1. Superseded versions never appear; use knowmind_recall_at_time for the past.",
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.recall)
	addTool(s, srv, tool{
		Name:  "knowmind_recall_at_time",
		Title: "Recall at a point in time",
		Description: "Point-in-time recall (bi-temporal): only memories valid at as_of (valid_from <= as_of and valid_to " +
			"unset or later), over relations valid then, each hit with valid_from and valid_to. " +
			"Answers \"what did the knowledge base know on March 14?\"",
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.recallAtTime)
	addTool(s, srv, tool{
		Name:  "knowmind_link",
		Title: "Link two memories",
		Description: "Creates a typed relation from_id --rel_type--> to_id between two memories of the workspace; the inverse " +
			"relation is materialised automatically. rel_type is UPPER_SNAKE_CASE (e.g. OWNS, FOR_CLIENT, SUPERSEDES, REFERENCES) " +
			"and must be allowed by the domain's shapes. Linking twice returns the same edge ids.",
		Scope: knowmind.ScopeWrite,
	}, s.link)
	addTool(s, srv, tool{
		Name:  "knowmind_unlink",
		Title: "Unlink two memories",
		Description: "Removes the typed relation from_id --rel_type--> to_id and its inverse. " +
			"The edge is closed (valid_to) rather than erased, so point-in-time queries still see it.",
		Scope: knowmind.ScopeWrite,
	}, s.unlink)
	addTool(s, srv, tool{
		Name:        "knowmind_list_relations",
		Title:       "Relations of a memory",
		Description: "The current outgoing and incoming typed relations of a memory, each with rel_type, the peer's id and title, and created_at.",
		Scope:       knowmind.ScopeRead,
		ReadOnly:    true,
	}, s.listRelations)
	addTool(s, srv, tool{
		Name:  "knowmind_explore",
		Title: "Explore a memory",
		Description: "One memory as a graph: its content, tags and (for a document) chunks, its version chain " +
			"(valid_from, valid_to, update reasons) and the memories within hops (1 to 3) relations, with the typed, " +
			"directed edges between them. With as_of the centre is the version valid then, and only edges and " +
			"memories valid then appear. The graph explorer at /ui shows this.",
		Scope:    knowmind.ScopeRead,
		ReadOnly: true,
	}, s.explore)
	addTool(s, srv, tool{
		Name:  "knowmind_store_memory",
		Title: "Store a memory",
		Description: "Stores a new memory in the workspace (chunks, vectors and graph node); afterwards knowmind_recall and " +
			"knowmind_list_recent find it. Append-only: a memory with an existing title is a new memory, never a replacement " +
			"(versioning is knowmind_update_fact's). Content already stored is recognised by its SHA-256 and returned with " +
			"unchanged: true. For longer texts with upsert per title use knowmind_upload_document.",
		Scope: knowmind.ScopeWrite,
	}, s.storeMemory)
	addTool(s, srv, tool{
		Name:  "knowmind_upload_document",
		Title: "Upload a document",
		Description: "Ingests a longer text as a document: split into sections (Markdown headings, paragraphs, then a size " +
			"limit with overlap), one vector per section, one graph node. Upsert per title: an existing document of the same " +
			"title is replaced by the new version, deleted only after the new one is ingested; its ids are in replaced_document_ids.",
		Scope: knowmind.ScopeWrite,
	}, s.uploadDocument)
	addTool(s, srv, tool{
		Name:  "knowmind_update_fact",
		Title: "Update a fact (bi-temporal)",
		Description: "Bi-temporal update of a memory: the target gets valid_to = now, a new version with valid_from = now is " +
			"created and linked new --SUPERSEDES--> old. Nothing is deleted, so history stays auditable. Only the current " +
			"version can be updated; updating an older one is refused naming the current version.",
		Scope:      knowmind.ScopeWrite,
		ScopeError: codeForbidden,
	}, s.updateFact)
	s.registerEngineTools(srv) // engine_tools.go
}

// tool is what tools/list shows of a tool and what calling it requires.
type tool struct {
	Name        string
	Title       string
	Description string
	// Scope the token must hold; "" = any valid token (knowmind_health).
	// admin implies write implies read (knowmind.Principal.Has).
	Scope knowmind.Scope
	// ScopeError is the JSON-RPC code for a missing scope; 0 = -32002, the
	// spec's default (knowmind_update_fact's table says 403).
	ScopeError int64
	// ReadOnly marks tools that change nothing (MCP annotation readOnlyHint).
	ReadOnly bool
}

// registeredTool is a tool plus the strict decoder of its Params type, used
// before the SDK sees the arguments (see guardCalls).
type registeredTool struct {
	tool
	check func(args json.RawMessage) error
}

// addTool registers run as an MCP tool. P is the params struct (json and
// validate tags; jsonschema tags become descriptions), R the result struct:
// the SDK derives inputSchema and outputSchema from them and sends R as
// structuredContent plus the same JSON as a text block.
//
// Before run is called the principal holds t.Scope and the arguments passed
// strict decoding and validation (-32602 naming the parameter); errors run
// returns go through rpcError (errors.go).
func addTool[P, R any](s *service, srv *mcp.Server, t tool, run func(ctx context.Context, p P) (R, error)) {
	codec, err := newParamsCodec[P]()
	if err != nil {
		panic(fmt.Sprintf("tool %s: %v", t.Name, err))
	}
	out, err := jsonschema.For[R](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", t.Name, err))
	}
	if _, dup := s.tools[t.Name]; dup {
		panic("tool registered twice: " + t.Name)
	}
	s.tools[t.Name] = &registeredTool{tool: t, check: func(args json.RawMessage) error {
		_, err := codec.decode(args)
		return err
	}}
	mcp.AddTool(srv, &mcp.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  codec.schema,
		OutputSchema: out,
		Annotations:  &mcp.ToolAnnotations{Title: t.Title, ReadOnlyHint: t.ReadOnly, OpenWorldHint: new(bool)},
	}, func(ctx context.Context, req *mcp.CallToolRequest, p P) (*mcp.CallToolResult, R, error) {
		var zero R
		// Checked again here, not only in guardCalls: a tool must never run
		// beyond its token's scope, whatever the middleware order.
		ctx, err := s.callContext(ctx, req, t)
		if err != nil {
			return nil, zero, err
		}
		r, err := run(ctx, p)
		if err != nil {
			return nil, zero, rpcError(ctx, s.log, err)
		}
		return nil, r, nil
	})
}

// guardCalls is the MCP receiving middleware: tools/list shows only the tools
// the caller's scopes allow, and tools/call checks scope and arguments before
// the SDK validates them against the schema (whose errors would be an isError
// result, not the spec's -32602 naming the parameter).
func (s *service) guardCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				p, _ := principalOf(req.GetExtra())
				lr.Tools = slices.DeleteFunc(lr.Tools, func(mt *mcp.Tool) bool {
					t := s.tools[mt.Name]
					return t == nil || (t.Scope != "" && !p.Has(t.Scope))
				})
				s.describeEngineTools(lr.Tools) // engine_tools.go: the domain's vocabulary
			}
			return res, err
		case "tools/call":
			call, ok := req.(*mcp.CallToolRequest)
			if !ok || call.Params == nil {
				break
			}
			t := s.tools[call.Params.Name]
			if t == nil {
				break // the SDK answers "unknown tool"
			}
			cctx, err := s.callContext(ctx, call, t.tool)
			if err != nil {
				return nil, err
			}
			if err := t.check(call.Params.Arguments); err != nil {
				return nil, rpcError(cctx, s.log, err)
			}
			call.Params.Arguments = dropNulls(call.Params.Arguments)
		}
		return next(ctx, method, req)
	}
}

// callInfo is what a tool call knows about its caller.
type callInfo struct {
	principal knowmind.Principal
	viaJWT    bool // tenants of identity-provider JWTs get their namespace on first use
	requestID string
}

type callKey struct{}

// callContext authorises one call of t and returns ctx carrying the caller.
func (s *service) callContext(ctx context.Context, req *mcp.CallToolRequest, t tool) (context.Context, error) {
	extra := req.GetExtra()
	p, ok := principalOf(extra)
	if !ok {
		return ctx, rpcError(ctx, s.log, knowmind.Errorf(knowmind.EUNAUTHORIZED, "bearer token missing or invalid"))
	}
	ci := callInfo{principal: p, viaJWT: extra.TokenInfo.Extra[extraJWT] == true}
	if extra.Header != nil {
		ci.requestID = extra.Header.Get(requestIDHeader)
	}
	ctx = context.WithValue(ctx, callKey{}, ci)
	if t.Scope != "" && !p.Has(t.Scope) {
		code := t.ScopeError
		if code == 0 {
			code = codeScope
		}
		e := rpcError(ctx, s.log, knowmind.Errorf(knowmind.ESCOPE, "scope %s missing", t.Scope))
		e.Code = code
		return ctx, e
	}
	return ctx, nil
}

// tenant is the only function in this package that opens tenant data. The
// tenant comes from the authenticated principal of the call — never from
// tool arguments — and the session it returns is logged into that tenant's
// Dgraph namespace, so no query can reach another tenant.
func (s *service) tenant(ctx context.Context) (*graph.Tenant, error) {
	ci, ok := ctx.Value(callKey{}).(callInfo)
	if !ok || ci.principal.Tenant == "" {
		return nil, errors.New("tenant: no authenticated principal in the call context")
	}
	// kmt_ tokens exist only for tenants whose namespace CreateToken made;
	// a JWT's tenant is created on first use.
	return s.graph.Tenant(ctx, ci.principal.Tenant, ci.viaJWT)
}

func principalOf(extra *mcp.RequestExtra) (knowmind.Principal, bool) {
	if extra == nil || extra.TokenInfo == nil {
		return knowmind.Principal{}, false
	}
	p, ok := extra.TokenInfo.Extra[extraPrincipal].(knowmind.Principal)
	return p, ok
}

func requestIDFrom(ctx context.Context) string {
	ci, _ := ctx.Value(callKey{}).(callInfo)
	return ci.requestID
}

// intOr is the value of an optional integer parameter, or its default.
func intOr(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// dropNulls removes top-level null arguments. Our check treats null as
// absent; the SDK's schema check would reject it as a wrong type (an isError
// result instead of the spec's codes), so it must not see them.
func dropNulls(args json.RawMessage) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return args
	}
	changed := false
	for k, v := range m {
		if string(bytes.TrimSpace(v)) == "null" {
			delete(m, k)
			changed = true
		}
	}
	if !changed {
		return args
	}
	out, err := json.Marshal(m)
	if err != nil {
		return args
	}
	return out
}
