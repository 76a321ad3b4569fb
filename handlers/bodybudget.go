package handlers

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"golang.org/x/sync/semaphore"

	"github.com/knowmind/knowmind"
)

// Memory for request bodies is bounded twice. Each body is capped before it
// is read (maxBody: its Content-Length is checked first, the reader stops at
// the cap). And the bodies being read, decoded and handled at once share one
// budget across every token and tenant: a rate limit per token does not stop
// forty large calls in one burst, or eight tokens sending five each, and
// each of them costs the body several times over while the SDK and the tool
// decode it. A request the budget cannot take is refused at once with 503
// and Retry-After instead of being buffered.
const (
	// largestLegalBody is the largest request a tool accepts: one content of
	// knowmind.MaxContentChars characters, each written as a JSON-escaped
	// surrogate pair (12 bytes), plus 1 MiB for the other parameters.
	largestLegalBody = 12*knowmind.MaxContentChars + 1<<20
	// DefaultBodyBudget is the default of Deps.BodyBudgetBytes: two requests
	// of the largest legal size at once (each costs several times its size
	// while it is decoded), or some thirty documents of a million ASCII
	// characters. README "Limits" measures the service's memory under 40
	// concurrent requests of the largest size.
	DefaultBodyBudget = 2 * largestLegalBody
	// freeBodyBytes of each body are read without the budget: ordinary
	// calls never wait for large ones, and their number is bounded by the
	// rate limits and the tool calls in flight per tenant.
	freeBodyBytes = 64 << 10
	// budgetStep is what a body of unknown length (chunked) takes from the
	// budget at a time while it is read.
	budgetStep = 1 << 20
)

// errBudget: the budget cannot take this body now.
var errBudget = errors.New("request body budget exhausted")

// bodyBudget is the shared budget; nil = unbounded.
type bodyBudget struct {
	sem *semaphore.Weighted
}

func newBodyBudget(bytes int64) *bodyBudget {
	if bytes < 0 {
		return nil
	}
	if bytes == 0 {
		bytes = DefaultBodyBudget
	}
	return &bodyBudget{sem: semaphore.NewWeighted(bytes)}
}

// readBody reads r's body of at most max bytes under the budget. The bytes
// stay taken until release is called (after the request is answered: the
// body and its decoded copies live that long). Errors: *http.MaxBytesError
// (over max), errBudget, or the read's own.
func (b *bodyBudget) readBody(w http.ResponseWriter, r *http.Request, max int64) (body []byte, release func(), err error) {
	taken := int64(0)
	release = func() {
		if b != nil && taken > 0 {
			b.sem.Release(taken)
			taken = 0
		}
	}
	if r.ContentLength > max {
		return nil, release, &http.MaxBytesError{Limit: max}
	}
	take := func(n int64) bool {
		if b == nil || n <= 0 {
			return true
		}
		if !b.sem.TryAcquire(n) {
			return false
		}
		taken += n
		return true
	}
	in := http.MaxBytesReader(w, r.Body, max)
	if r.ContentLength >= 0 {
		if !take(r.ContentLength - freeBodyBytes) {
			return nil, release, errBudget
		}
		body = make([]byte, r.ContentLength)
		if _, err := io.ReadFull(in, body); err != nil {
			return nil, release, err
		}
		return body, release, nil
	}
	// Chunked: take the budget step by step as the body arrives.
	var buf []byte
	chunk := make([]byte, 32<<10)
	for {
		n, err := in.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for int64(len(buf)) > freeBodyBytes+taken {
			if !take(budgetStep) {
				return nil, release, errBudget
			}
		}
		if err == io.EOF {
			return buf, release, nil
		}
		if err != nil {
			return nil, release, err
		}
	}
}

// A refused call should cost little more than its body. The SDK reads a
// tools/call body many times over before a tool's own checks run (it
// buffers the body again, decodes the message, its params and its
// arguments, each through a growing buffer; README "Limits" measures it),
// so a call whose arguments hold a string longer than any parameter of its
// tool allows is checked here, on the body already read: its arguments are
// checked exactly as guardCalls checks them, and when they fail the SDK is
// handed the call with empty arguments and the error (extraRefusal), which
// guardCalls answers after the scope and toolset checks, as it would have.
// The answer is the tool's own, the SDK's session and transport rules
// still apply, and the body's large copies are never made.

// refuseOversized returns the body the SDK should read and the refusal its
// arguments earned; body and nil when it has none or the body is not the
// plain shape this reads (the SDK and guardCalls then decide as ever).
// body is a JSON-RPC tools/call that encoding/json accepted.
func (s *service) refuseOversized(body []byte) ([]byte, error) {
	params, ok := member(body, 0, "params")
	if !ok {
		return body, nil
	}
	nameAt, ok := member(body, params, "name")
	if !ok {
		return body, nil
	}
	var name string
	if json.Unmarshal(body[nameAt:valueEnd(body, nameAt)], &name) != nil {
		return body, nil
	}
	t := s.tools[name]
	args, ok := member(body, params, "arguments")
	if t == nil || t.longest < 0 || !ok || body[args] != '{' {
		return body, nil
	}
	end := valueEnd(body, args)
	if !holdsStringOver(body[args:end], t.longest) {
		return body, nil
	}
	err := t.check(t.normalise(body[args:end]))
	if err == nil {
		return body, nil
	}
	small := make([]byte, 0, len(body)-(end-args)+2)
	small = append(append(append(small, body[:args]...), "{}"...), body[end:]...)
	return small, err
}

// longestString is the most characters schema's string properties take
// (maxLength, or the longest of an enum); -1 when one takes any length.
func longestString(schema *jsonschema.Schema) int {
	longest := 0
	for _, prop := range schema.Properties {
		if prop.Type != "string" && !slices.Contains(prop.Types, "string") {
			continue
		}
		switch {
		case prop.MaxLength != nil:
			longest = max(longest, *prop.MaxLength)
		case len(prop.Enum) > 0:
			for _, v := range prop.Enum {
				if v, ok := v.(string); ok {
					longest = max(longest, utf8.RuneCountInString(v))
				}
			}
		default:
			return -1
		}
	}
	return longest
}

// The scanner below reads JSON that encoding/json has accepted, by byte
// offsets, without copying it.

// maxScanDepth: deeper arguments are left to the SDK, which refuses
// nesting beyond its own limit before any tool check.
const maxScanDepth = 100

// member is the offset of the value of the member key in the object whose
// value starts at (or after whitespace from) i; false when the value is not
// an object, holds key twice, or holds a key written with escapes (which
// the SDK's decoding might read as key).
func member(data []byte, i int, key string) (int, bool) {
	i = skipSpace(data, i)
	if i >= len(data) || data[i] != '{' {
		return 0, false
	}
	found := -1
	i++
	for {
		i = skipSpace(data, i)
		if i >= len(data) || data[i] == '}' {
			break
		}
		keyEnd := valueEnd(data, i)
		raw := data[i+1 : keyEnd-1]
		if bytes.IndexByte(raw, '\\') >= 0 {
			return 0, false
		}
		i = skipSpace(data, keyEnd) + 1 // the colon
		i = skipSpace(data, i)
		if string(raw) == key {
			if found >= 0 {
				return 0, false
			}
			found = i
		}
		i = skipSpace(data, valueEnd(data, i))
		if i < len(data) && data[i] == ',' {
			i++
		}
	}
	return found, found >= 0
}

// valueEnd is the offset just past the JSON value starting at i.
func valueEnd(data []byte, i int) int {
	depth := 0
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			i = stringEnd(data, i) - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i // the end of a literal
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}

// stringEnd is the offset just past the JSON string starting at i (a quote).
func stringEnd(data []byte, i int) int {
	for i++; i < len(data); i++ {
		switch data[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// holdsStringOver reports whether the JSON value v holds a string (or key)
// of more than n bytes between its quotes, and so possibly of more than n
// characters; false when v nests deeper than maxScanDepth.
func holdsStringOver(v []byte, n int) bool {
	depth, over := 0, false
	for i := 0; i < len(v); i++ {
		switch v[i] {
		case '"':
			end := stringEnd(v, i)
			over = over || end-i-2 > n
			i = end - 1
		case '{', '[':
			if depth++; depth > maxScanDepth {
				return false
			}
		case '}', ']':
			depth--
		}
	}
	return over
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r' || data[i] == '\n') {
		i++
	}
	return i
}
