package handlers

import (
	"errors"
	"io"
	"net/http"

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
