package handlers

import (
	"context"
	"log/slog"
)

// RequestIDLogHandler adds the request id of the call a log line belongs to
// (when its context carries one and the line does not name it already), so
// every line of one call can be found by it.
func RequestIDLogHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

type requestIDKey struct{}

// withRequestID puts id into ctx for RequestIDLogHandler.
func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestIDOf is the request id of a call: the tool call's own (callKey),
// else the one observeCalls or the endpoint put into ctx.
func requestIDOf(ctx context.Context) string {
	if id := requestIDFrom(ctx); id != "" {
		return id
	}
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if ctx != nil {
		if id := requestIDOf(ctx); id != "" {
			named := false
			r.Attrs(func(a slog.Attr) bool {
				named = a.Key == "request_id"
				return !named
			})
			if !named {
				r = r.Clone()
				r.AddAttrs(slog.String("request_id", id))
			}
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
