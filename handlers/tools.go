package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/shapes"
)

// toolList is every MCP tool, in tools/list order. Each tool's file declares it
// once (name, scope, toolset, annotations, description, params, result,
// handler); registration, toolsets and initialize's instructions read this
// list. Names, descriptions and schemas are constants and Go types: stored
// content never flows into them.
var toolList = []toolDecl{
	healthTool,
	statsTool,
	listRecentTool,
	recallTool,
	recallAtTimeTool,
	linkTool,
	unlinkTool,
	listRelationsTool,
	exploreTool,
	storeMemoryTool,
	storeMemoriesTool,
	uploadDocumentTool,
	updateFactTool,
	listProjectsTool,
	startSessionTool,
	whoamiTool,
	listNotesTool,
	recentActivityTool,
	getNoteTool,
	searchTool,
	contextTool,
	createNoteTool,
	editNoteTool,
	deleteNoteTool,
	linkNoteTool,
	renameNoteTool,
	moveNoteTool,
	moveFolderTool,
	renameProjectTool,
	createNotesTool,
	linkManyTool,
	rememberAboutUserTool,
	rememberAboutProjectTool,
	captureTool,
	listDraftsTool,
	reviewDraftTool,
	listEntitiesTool,
	captureCalibrationTool,
	setCaptureThresholdsTool,
	setGoalTool,
	listGoalsTool,
	closeGoalTool,
	briefingTool,
	retrieveTool,
	replayTool,
}

// registerTools registers every tool of toolList with srv.
func (s *service) registerTools(srv *mcp.Server) {
	if s.engine.extractors == nil {
		s.engine = newEngine(Extractors{}, newVocabulary(Deps{}, s.shapeSet))
	}
	for _, d := range toolList {
		d.register(s, srv)
	}
}

// toolDecl is one tool's declaration: what tools/list shows of it and what
// calling it requires, plus the function that registers its handler.
type toolDecl struct {
	tool
	register func(s *service, srv *mcp.Server)
}

// declare is how a tool's file declares it: run is the handler as a method
// expression, e.g. (*service).stats.
func declare[P, R any](t tool, run func(*service, context.Context, P) (R, error)) toolDecl {
	return toolDecl{tool: t, register: func(s *service, srv *mcp.Server) {
		addTool(s, srv, t, func(ctx context.Context, p P) (R, error) { return run(s, ctx, p) })
	}}
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
	// ReadOnly marks tools that change nothing (MCP annotation readOnlyHint;
	// such tools are also idempotent and not destructive).
	ReadOnly bool
	// Idempotent: calling again with the same arguments changes nothing more
	// (idempotentHint). Destructive: the tool may delete or overwrite
	// (destructiveHint; MCP assumes true when it is absent, so it is always sent).
	Idempotent, Destructive bool
	// RelTypes marks a tool whose rel_type parameter takes a relation type of
	// the shape set: tools/list shows the types as the parameter's enum, and a
	// type outside them is refused before the call with 400 listing the
	// allowed ones (the SDK's own enum check would answer an isError result).
	RelTypes bool
	// Toolset is the toolset the tool belongs to (knowmind.AllToolsets); ""
	// only for knowmind_health, which every token sees.
	Toolset string
	// More, when set, is appended to Description at registration: text from
	// the service's configuration (relation shapes, extractors), never from
	// stored content.
	More func(s *service) string
	// Vocabulary: tools/list appends the domain's entity types and categories
	// (engine_tools.go), refreshed from the shape files.
	Vocabulary bool
}

// registeredTool is a tool plus the strict decoder of its Params type, used
// before the SDK sees the arguments (see guardCalls).
type registeredTool struct {
	tool
	check     func(args json.RawMessage) error
	normalise func(args json.RawMessage) json.RawMessage
	// longest is the most characters any string parameter takes (its
	// maxLength); -1 when one takes any length (refuseOversized).
	longest int
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
	if t.More != nil {
		t.Description += t.More(s)
	}
	if t.Vocabulary {
		s.engine.described[t.Name] = t.Description
	}
	set := s.shapes()
	if t.RelTypes {
		prop := codec.schema.Properties[relTypeParam]
		if prop == nil {
			panic(fmt.Sprintf("tool %s: RelTypes without a %s parameter", t.Name, relTypeParam))
		}
		prop.Enum = nil
		for _, n := range set.Names() {
			prop.Enum = append(prop.Enum, n)
		}
	}
	s.tools[t.Name] = &registeredTool{tool: t, check: func(args json.RawMessage) error {
		if _, err := codec.decode(args); err != nil {
			return err
		}
		if t.RelTypes {
			return checkRelType(set, args)
		}
		return nil
	}, normalise: codec.normalise, longest: longestString(codec.schema)}
	// The title is the tool's own (Tool.Title); the annotation's would repeat it.
	ann := &mcp.ToolAnnotations{ReadOnlyHint: t.ReadOnly, IdempotentHint: t.ReadOnly || t.Idempotent,
		DestructiveHint: jsonschema.Ptr(!t.ReadOnly && t.Destructive), OpenWorldHint: new(bool)}
	mcp.AddTool(srv, &mcp.Tool{
		Name:         t.Name,
		Title:        t.Title,
		Description:  t.Description,
		InputSchema:  codec.schema,
		OutputSchema: out,
		Annotations:  ann,
	}, func(ctx context.Context, req *mcp.CallToolRequest, p P) (_ *mcp.CallToolResult, out json.RawMessage, err error) {
		// Checked again here, not only in guardCalls: a tool must never run
		// beyond its token's scope, whatever the middleware order.
		ctx, err = s.callContext(ctx, req, t)
		if err != nil {
			return nil, nil, err
		}
		// Tools run in the SDK's goroutines, outside the HTTP server's
		// recovery: a panic would end the process, for every tenant.
		defer func() {
			if v := recover(); v != nil {
				s.log.ErrorContext(ctx, "tool call panicked", "tool", t.Name, "request_id", requestIDFrom(ctx),
					"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
				out, err = nil, rpcError(ctx, s.log, fmt.Errorf("tool %s panicked: %v", t.Name, v))
			}
		}()
		release, err := s.inFlight.acquire(ctx)
		if err != nil {
			return nil, nil, rpcError(ctx, s.log, err)
		}
		defer release()
		if g, ok := s.workspaces.(knowmind.Gate); ok {
			ci, _ := ctx.Value(callKey{}).(callInfo)
			// Every tool that may change something is held, start_session's visit included:
			// a write done after a move's export would be lost in the target cell.
			leave, err := g.Enter(ctx, ci.principal.Tenant, !t.ReadOnly)
			if err != nil {
				return nil, nil, rpcError(ctx, s.log, err)
			}
			defer leave()
		}
		if s.callTimeout > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, s.callTimeout)
			defer cancel()
		}
		r, err := run(ctx, p)
		if err != nil {
			if errors.Is(err, context.DeadlineExceeded) && errors.Is(ctx.Err(), context.DeadlineExceeded) &&
				knowmind.AsError(err) == nil {
				err = knowmind.Errorf(knowmind.EUNAVAILABLE, "the call did not finish within %s", s.callTimeout)
			}
			return nil, nil, rpcError(ctx, s.log, err)
		}
		out, err = json.Marshal(r)
		if err != nil {
			return nil, nil, rpcError(ctx, s.log, fmt.Errorf("tool %s: marshal result: %w", t.Name, err))
		}
		return nil, uniformTimestamps(out), nil
	})
}

// timestampField matches a timestamp field of a result as encoding/json
// writes it. Inside a JSON string every quote is escaped, so the unescaped
// `,"created_at":"` or `{"created_at":"` only occurs as a real field.
var timestampField = regexp.MustCompile(`([{,]"(?:created_at|updated_at|valid_from|valid_to)":")([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(?:Z|[+-][0-9]{2}:[0-9]{2}))"`)

// TimestampLayout is the one form every timestamp of a tool result takes:
// RFC 3339 in UTC with milliseconds, e.g. 2026-06-10T07:12:44.120Z.
// (encoding/json writes time.Time with as many fraction digits as are not
// zero, so one result could hold 07:12:44Z and 07:12:44.1234Z.)
const TimestampLayout = "2006-01-02T15:04:05.000Z07:00"

// uniformTimestamps rewrites the timestamps of a result JSON to TimestampLayout.
func uniformTimestamps(js []byte) []byte {
	return timestampField.ReplaceAllFunc(js, func(m []byte) []byte {
		sub := timestampField.FindSubmatch(m)
		ts, err := time.Parse(time.RFC3339Nano, string(sub[2]))
		if err != nil {
			return m
		}
		return append(append(slices.Clone(sub[1]), ts.UTC().Format(TimestampLayout)...), '"')
	})
}

// inFlight bounds the tool calls a tenant has running at once, so one tenant
// cannot take every goroutine, Dgraph connection and embedder slot; over the
// bound a call is refused at once (429) rather than queued.
type inFlight struct {
	max     int // 0 = unbounded
	mu      sync.Mutex
	running map[string]int // tenant → calls running
}

func (f *inFlight) acquire(ctx context.Context) (release func(), err error) {
	ci, _ := ctx.Value(callKey{}).(callInfo)
	tenant := ci.principal.Tenant
	if f == nil || f.max <= 0 || tenant == "" {
		return func() {}, nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.running[tenant] >= f.max {
		e := knowmind.Errorf(knowmind.ERATELIMIT, "too many calls of this workspace running at once (at most %d)", f.max)
		e.Data = map[string]any{"retry_after_s": 1}
		return nil, e
	}
	if f.running == nil {
		f.running = map[string]int{}
	}
	f.running[tenant]++
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		if f.running[tenant]--; f.running[tenant] <= 0 {
			delete(f.running, tenant)
		}
	}, nil
}

// guardCalls is the MCP receiving middleware: tools/list shows only the tools
// the caller's scopes allow, and tools/call checks scope and arguments before
// the SDK validates them against the schema (whose errors would be an isError
// result, not the spec's -32602 naming the parameter).
func (s *service) guardCalls(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "initialize":
			res, err := next(ctx, method, req)
			if ir, ok := res.(*mcp.InitializeResult); ok && err == nil {
				if p, ok := s.principal(req.GetExtra()); ok {
					ir.Instructions = s.instructions(p)
				}
			}
			return res, err
		case "tools/list":
			res, err := next(ctx, method, req)
			if lr, ok := res.(*mcp.ListToolsResult); ok && err == nil {
				p, _ := s.principal(req.GetExtra())
				lr.Tools = slices.DeleteFunc(lr.Tools, func(mt *mcp.Tool) bool {
					t := s.tools[mt.Name]
					return t == nil || (t.Scope != "" && !p.Has(t.Scope)) || !s.lists(p, mt.Name)
				})
				s.describeEngineTools(lr.Tools) // engine_tools.go: the domain's vocabulary
				if extra := req.GetExtra(); extra == nil || extra.TokenInfo == nil || extra.TokenInfo.Extra[extraOutputSchemas] != true {
					for i, mt := range lr.Tools {
						c := *mt // the server's own record keeps its schema: the SDK checks results against it
						c.OutputSchema = nil
						lr.Tools[i] = &c
					}
				}
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
			if extra := call.GetExtra(); extra != nil && extra.TokenInfo != nil {
				if err, _ := extra.TokenInfo.Extra[extraRefusal].(error); err != nil {
					return nil, rpcError(cctx, s.log, err) // the arguments were checked before the SDK read them
				}
			}
			args := t.normalise(call.Params.Arguments)
			if err := t.check(args); err != nil {
				return nil, rpcError(cctx, s.log, err)
			}
			call.Params.Arguments = dropNulls(args)
		}
		return next(ctx, method, req)
	}
}

// relTypeParam is the parameter of link and unlink that names a relation type.
const relTypeParam = "rel_type"

// shapes is the relation shape set the graph checks links against.
func (s *service) shapes() *shapes.Set {
	if s.shapeSet != nil {
		return s.shapeSet
	}
	set, err := shapes.Default()
	if err != nil {
		panic(err) // the embedded default is tested to load
	}
	return set
}

// relTypesText lists every relation type with its one-line meaning and the
// classes its ends need, for knowmind_link's description. It comes from the
// shape files (admin configuration), never from stored content.
func relTypesText(set *shapes.Set) string {
	var b strings.Builder
	b.WriteString("rel_type is one of:")
	for _, r := range set.Relations() {
		if graph.IsHistoryRelation(r.Name) || r.Implicit {
			continue // history is knowmind_update_fact's; an implicit inverse is named with its partner
		}
		fmt.Fprintf(&b, "\n- %s: %s", r.Name, r.Description)
		if inv, ok := set.Relation(r.Inverse); ok && inv.Implicit {
			fmt.Fprintf(&b, " [inverse %s]", inv.Name)
		}
		var ends []string
		if !slices.Contains(r.Source, shapes.Any) {
			ends = append(ends, "source tagged "+classTags(r.Source))
		}
		if !slices.Contains(r.Target, shapes.Any) {
			ends = append(ends, "target tagged "+classTags(r.Target))
		}
		if len(ends) > 0 {
			fmt.Fprintf(&b, " [%s]", strings.Join(ends, "; "))
		}
		if r.MaxCount > 0 {
			fmt.Fprintf(&b, " [at most %d per source]", r.MaxCount)
		}
	}
	return b.String()
}

func classTags(classes []string) string {
	tags := make([]string, len(classes))
	for i, c := range classes {
		tags[i] = "class:" + c
	}
	return strings.Join(tags, " or ")
}

// checkRelType refuses a malformed rel_type (-32602) or one the shapes do not
// define (400, data.allowed listing every type) before the call. Without
// rel_type it reads seed 001's relation_type, in any case (the seed writes
// caused_by, contradicts, relates_to); a missing one is left to the
// parameter check, which names it.
func checkRelType(set *shapes.Set, args json.RawMessage) error {
	var p struct {
		RelType      any `json:"rel_type"`
		RelationType any `json:"relation_type"`
	}
	if err := json.Unmarshal(args, &p); err != nil {
		return knowmind.InvalidParam("arguments", "arguments must be a JSON object")
	}
	v, name := p.RelType, relTypeParam
	if v == nil {
		v, name = p.RelationType, "relation_type"
	}
	if v == nil {
		return nil
	}
	rt, ok := v.(string)
	if !ok {
		return knowmind.InvalidParam(name, "%s must be a string", name)
	}
	if name != relTypeParam {
		rt = strings.ToUpper(strings.TrimSpace(rt))
	}
	if _, ok := set.Relation(rt); ok {
		return nil
	}
	return set.Check(rt, nil, nil, 0)
}

// callInfo is what a tool call knows about its caller.
type callInfo struct {
	principal knowmind.Principal
	// tool is the called tool's name, which notes record as the actor's via.
	tool string
	// createTenant: the tenant gets its namespace on first use (OAuth access
	// tokens, JWTs under --jwt-create-tenants, stdio's local user when told so).
	createTenant bool
	requestID    string
	// session is the MCP session the call comes in (Mcp-Session-Id; the stdio process's own):
	// a token's implicit sequences are kept per session. Empty for a one-shot request.
	session string
}

type callKey struct{}

// callContext authorises one call of t and returns ctx carrying the caller.
func (s *service) callContext(ctx context.Context, req *mcp.CallToolRequest, t tool) (context.Context, error) {
	extra := req.GetExtra()
	p, ok := principalOf(extra)
	var ci callInfo
	switch {
	case ok:
		ci = callInfo{principal: p, createTenant: extra.TokenInfo.Extra[extraCreate] == true}
		if extra.Header != nil {
			ci.requestID = extra.Header.Get(requestIDHeader)
			// Only a stateful session's requests carry it (the endpoint sends the others to the
			// one-shot handler, whose SDK session id is new on every request).
			ci.session = extra.Header.Get(sessionHeader)
		}
		if ci.requestID == "" {
			ci.requestID = requestIDOf(ctx)
		}
	case s.local != nil:
		lp, err := s.local.check(ctx)
		if err != nil {
			return ctx, rpcError(ctx, s.log, err)
		}
		ci = callInfo{principal: lp, createTenant: s.local.CreateTenant, requestID: requestIDOf(ctx), session: s.localSession}
	default:
		return ctx, rpcError(ctx, s.log, knowmind.Errorf(knowmind.EUNAUTHORIZED, "bearer token missing or invalid"))
	}
	ci.tool = t.Name
	ctx = context.WithValue(ctx, callKey{}, ci)
	// What the caller may see travels with every call into graph, which checks each id against it.
	ctx = knowmind.WithNoteScope(ctx, scopeOf(ci.principal))
	if !s.reaches(ci.principal, t.Name) {
		e := rpcError(ctx, s.log, knowmind.Errorf(knowmind.ESCOPE, "tool %s is outside this token's toolsets", t.Name))
		e.Code = codeScope
		return ctx, e
	}
	if t.Scope != "" && !ci.principal.Has(t.Scope) {
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
func (s *service) tenant(ctx context.Context) (knowmind.Workspace, error) {
	ci, ok := ctx.Value(callKey{}).(callInfo)
	if !ok || ci.principal.Tenant == "" {
		return nil, errors.New("tenant: no authenticated principal in the call context")
	}
	// kmt_ tokens exist only for tenants whose namespace CreateToken made;
	// a JWT's tenant is created on first use only where the operator allows it.
	t, err := s.workspaces.Workspace(ctx, ci.principal.Tenant, ci.createTenant)
	if !ci.createTenant && knowmind.ErrorCode(err) == knowmind.ENOTFOUND {
		return nil, knowmind.Errorf(knowmind.EFORBIDDEN, "the token's tenant has no workspace on this service")
	}
	return t, err
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
func floatOr(p *float64, def float64) float64 {
	if p == nil {
		return def
	}
	return *p
}

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
