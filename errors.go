package knowmind

import (
	"errors"
	"fmt"
)

// Error codes. The transport (handlers/errors.go) maps each to the spec's
// JSON-RPC or HTTP code in exactly one place.
const (
	EINVALID      = "invalid"      // -32602 invalid params
	ESCOPE        = "scope"        // -32002 scope missing
	EPROVIDER     = "provider"     // -32000 service token unconfigured / provider error
	EINTERNAL     = "internal"     // -32603 with a reason (content_required, too_large, ingest_failed)
	EUNAUTHORIZED = "unauthorized" // 401
	EFORBIDDEN    = "forbidden"    // 403
	ENOTFOUND     = "not_found"    // 404
	ECONSTRAINT   = "constraint"   // 400 SHACL constraint violated
	ECONFLICT     = "conflict"     // 409 e.g. updating a superseded version
	ERATELIMIT    = "rate_limited" // 429
	EUNAVAILABLE  = "unavailable"  // 503
)

// Reasons carried with EINTERNAL (-32603), as the spec names them.
const (
	ReasonContentRequired = "content_required"
	ReasonTooLarge        = "too_large"
	ReasonIngestFailed    = "ingest_failed"
)

// Error is a domain error with a machine code. Message is safe to show to a
// client: it names a parameter or a reason, never internal details.
type Error struct {
	Code    string
	Reason  string // for EINTERNAL: content_required, too_large, ingest_failed
	Param   string // for EINVALID: the offending parameter
	Message string
	Data    map[string]any // extra structured detail safe for clients (e.g. current_version_id)
}

func (e *Error) Error() string {
	if e.Reason != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Reason, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Errorf builds an Error with a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// InvalidParam reports a bad parameter, naming it.
func InvalidParam(param, format string, args ...any) *Error {
	return &Error{Code: EINVALID, Param: param, Message: fmt.Sprintf(format, args...)}
}

// Internal reports a -32603 condition with one of the spec's reasons.
func Internal(reason, format string, args ...any) *Error {
	return &Error{Code: EINTERNAL, Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of err if it is (or wraps) an *Error, and
// EINTERNAL otherwise: unknown failures are internal and their text stays in the log.
func ErrorCode(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	if err == nil {
		return ""
	}
	return EINTERNAL
}

// AsError unwraps err to an *Error, or nil.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return nil
}
