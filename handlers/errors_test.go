package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
)

func TestErrorMapping(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int64
		msg  string
		data string
	}{
		{knowmind.InvalidParam("query", "query is required"), -32602, "query is required", `{"param":"query"}`},
		{knowmind.Errorf(knowmind.ESCOPE, "scope read missing"), -32002, "scope read missing", ``},
		{knowmind.Errorf(knowmind.EPROVIDER, "embedding provider unconfigured"), -32000, "embedding provider unconfigured", ``},
		{knowmind.Internal(knowmind.ReasonContentRequired, "content is empty"), -32603, "content_required", `{"detail":"content is empty","reason":"content_required"}`},
		{knowmind.Internal(knowmind.ReasonTooLarge, ""), -32603, "too_large", `{"reason":"too_large"}`},
		{fmt.Errorf("ingest: %w", knowmind.Internal(knowmind.ReasonIngestFailed, "x")), -32603, "ingest_failed", `{"detail":"x","reason":"ingest_failed"}`},
		{knowmind.Errorf(knowmind.ENOTFOUND, "memory m1 not found"), 404, "memory m1 not found", ``},
		{knowmind.Errorf(knowmind.ECONSTRAINT, "OWNS not allowed from Task"), 400, "SHACL constraint violated: OWNS not allowed from Task", ``},
		// package shapes words its violations with the prefix already: not twice.
		{&knowmind.Error{Code: knowmind.ECONSTRAINT, Message: "SHACL constraint violated: rel_type LIKES is not defined"}, 400, "SHACL constraint violated: rel_type LIKES is not defined", ``},
		{knowmind.Errorf(knowmind.EFORBIDDEN, "no"), 403, "no", ``},
		{&knowmind.Error{Code: knowmind.ECONFLICT, Message: "superseded", Data: map[string]any{"current_version_id": "m2"}}, 409, "superseded", `{"current_version_id":"m2"}`},
		{knowmind.Errorf(knowmind.ERATELIMIT, "slow down"), 429, "slow down", ``},
		{knowmind.Errorf(knowmind.EUNAVAILABLE, "service unavailable"), 503, "service unavailable", ``},
		{knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token"), 401, "invalid token", ``},
	} {
		var logs bytes.Buffer
		e := rpcError(context.Background(), slog.New(slog.NewTextHandler(&logs, nil)), tc.err)
		if e.Code != tc.code || e.Message != tc.msg || string(e.Data) != tc.data {
			t.Errorf("%v → %d %q %s; want %d %q %s", tc.err, e.Code, e.Message, e.Data, tc.code, tc.msg, tc.data)
		}
	}
}

func TestUnknownErrorsStayInTheLog(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.WithValue(context.Background(), callKey{}, callInfo{requestID: "req-42"})
	for _, err := range []error{
		errors.New("dgraph: connection refused at 10.0.0.7:9080"),
		knowmind.Errorf(knowmind.EINTERNAL, "no reason given: dgraph 10.0.0.7"),
	} {
		logs.Reset()
		e := rpcError(ctx, log, err)
		b, _ := json.Marshal(e)
		if e.Code != -32603 || strings.Contains(string(b), "10.0.0.7") || !strings.Contains(e.Message, "req-42") {
			t.Errorf("client sees %s", b)
		}
		if !strings.Contains(logs.String(), "10.0.0.7") || !strings.Contains(logs.String(), "req-42") {
			t.Errorf("log lacks the detail or request id: %s", logs.String())
		}
	}
}
