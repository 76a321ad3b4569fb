package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"maps"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
)

// This file is the one place where domain errors become the spec's codes.
//
//	knowmind code   JSON-RPC error code   message / data
//	EINVALID        -32602                names the parameter; data {"param"}
//	ESCOPE          -32002                "scope <x> missing" (a tool may declare 403 instead)
//	EPROVIDER       -32000                provider / service token problem
//	EINTERNAL       -32603                the reason; data {"reason": content_required|too_large|ingest_failed}
//	EUNAUTHORIZED   401                   (normally answered at HTTP level before MCP)
//	EFORBIDDEN      403
//	ENOTFOUND       404
//	ECONSTRAINT     400                   "SHACL constraint violated: ..."
//	ECONFLICT       409
//	ERATELIMIT      429
//	EUNAVAILABLE    503
//	anything else   -32603                "internal error"; the detail goes to the log only
//
// data also carries Error.Data (client-safe detail such as current_version_id).

// Spec codes that are not JSON-RPC's own.
const (
	codeProvider    = -32000
	codeScope       = -32002
	codeBadRequest  = 400
	codeUnauthorize = 401
	codeForbidden   = 403
	codeNotFound    = 404
	codeConflict    = 409
	codeRateLimited = 429
	codeUnavailable = 503
)

// constraintPrefix starts every 400 message, as the spec words it.
const constraintPrefix = "SHACL constraint violated: "

var codeByKind = map[string]int64{
	knowmind.EINVALID:      jsonrpc.CodeInvalidParams,
	knowmind.ESCOPE:        codeScope,
	knowmind.EPROVIDER:     codeProvider,
	knowmind.EINTERNAL:     jsonrpc.CodeInternalError,
	knowmind.EUNAUTHORIZED: codeUnauthorize,
	knowmind.EFORBIDDEN:    codeForbidden,
	knowmind.ENOTFOUND:     codeNotFound,
	knowmind.ECONSTRAINT:   codeBadRequest,
	knowmind.ECONFLICT:     codeConflict,
	knowmind.ERATELIMIT:    codeRateLimited,
	knowmind.EUNAVAILABLE:  codeUnavailable,
}

// rpcError turns any error from a tool into the JSON-RPC error the client sees.
// Errors that are not a *knowmind.Error (or an EINTERNAL without a reason)
// are logged with the request id and answered generically.
func rpcError(ctx context.Context, log *slog.Logger, err error) *jsonrpc.Error {
	var wire *jsonrpc.Error
	if errors.As(err, &wire) {
		return wire
	}
	e := knowmind.AsError(err)
	if e == nil && graph.Unreachable(err) {
		log.WarnContext(ctx, "dgraph did not answer", "request_id", requestIDFrom(ctx), "err", err)
		e = knowmind.Errorf(knowmind.EUNAVAILABLE, "service unavailable: the store did not answer in time, retry later")
	}
	if e == nil || (e.Code == knowmind.EINTERNAL && e.Reason == "") || codeByKind[e.Code] == 0 {
		if errors.Is(err, context.DeadlineExceeded) {
			log.WarnContext(ctx, "tool call timed out", "request_id", requestIDFrom(ctx), "err", err)
		} else {
			log.ErrorContext(ctx, "tool call failed", "request_id", requestIDFrom(ctx), "err", err)
		}
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error (request " + requestIDFrom(ctx) + ")"}
	}
	data := maps.Clone(e.Data)
	if data == nil {
		data = map[string]any{}
	}
	msg := e.Message
	switch e.Code {
	case knowmind.EINVALID:
		if e.Param != "" {
			data["param"] = e.Param
		}
	case knowmind.EINTERNAL:
		data["reason"] = e.Reason
		if e.Message != "" {
			data["detail"] = e.Message
		}
		msg = e.Reason
	case knowmind.ECONSTRAINT:
		// package shapes already words its violations this way; others
		// (e.g. unlink's history rule) get the prefix here, once.
		if !strings.HasPrefix(msg, constraintPrefix) {
			msg = constraintPrefix + msg
		}
	}
	if e.Code == knowmind.EINTERNAL || e.Code == knowmind.EUNAVAILABLE || e.Code == knowmind.EPROVIDER {
		log.WarnContext(ctx, "tool call error", "request_id", requestIDFrom(ctx), "code", e.Code, "reason", e.Reason, "message", e.Message)
	}
	return &jsonrpc.Error{Code: codeByKind[e.Code], Message: msg, Data: marshalData(data)}
}

func marshalData(data map[string]any) json.RawMessage {
	if len(data) == 0 {
		return nil
	}
	b, err := json.Marshal(data)
	if err != nil {
		return nil
	}
	return b
}

// writeHTTPError answers at HTTP level (before or around MCP) with a
// JSON-RPC error body, so MCP clients read the reason like any other error.
func writeHTTPError(w http.ResponseWriter, status int, id json.RawMessage, code int64, msg string, data map[string]any) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	body := struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: msg, Data: marshalData(data)}}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("Content-Length")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(body)
}
