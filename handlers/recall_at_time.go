package handlers

import (
	"context"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
)

// RecallAtTimeParams are knowmind_recall_at_time's parameters.
type RecallAtTimeParams struct {
	Query string `json:"query" jsonschema:"natural-language question" validate:"required,notblank,max=4000"`
	AsOf  string `json:"as_of,omitempty" jsonschema:"point in time, ISO 8601, e.g. 2026-03-14T00:00:00Z or 2026-03-14 (default now; without a zone UTC)"`
	K     *int   `json:"k,omitempty" jsonschema:"number of hits, 1 to 25 (default 5)" validate:"omitnil,min=1,max=25"`
}

// RecallAtTimeResult is RecallResult with each hit's valid_from and valid_to (absent: still
// valid).
type RecallAtTimeResult = knowmind.RecallResult

// recallAtTime recalls what was valid at as_of: memories with valid_from <= as_of and valid_to
// unset or later, over relations valid then (graph hops: the default 2).
func (s *service) recallAtTime(ctx context.Context, p RecallAtTimeParams) (RecallAtTimeResult, error) {
	asOf := time.Now().UTC()
	if strings.TrimSpace(p.AsOf) != "" {
		var err error
		if asOf, err = parseISO8601(p.AsOf); err != nil {
			return RecallAtTimeResult{}, err
		}
	}
	t, err := s.tenant(ctx)
	if err != nil {
		return RecallAtTimeResult{}, err
	}
	res, err := t.Recall(ctx, knowmind.RecallQuery{
		Query: p.Query,
		K:     intOr(p.K, knowmind.RecallDefaultK),
		Hops:  knowmind.RecallDefaultHops,
		AsOf:  &asOf,
	})
	if err != nil {
		return res, err
	}
	return res, t.AttachEntities(ctx, res.Hits)
}

// iso8601Layouts are the ISO 8601 forms as_of accepts: a full timestamp with a zone (Z or
// ±hh:mm, fractions allowed), one without a zone (read as UTC), and a calendar date (midnight
// UTC).
var iso8601Layouts = []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02T15:04", "2006-01-02"}

func parseISO8601(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range iso8601Layouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, knowmind.InvalidParam("as_of", "as_of must be an ISO 8601 date or time, e.g. 2026-03-14T00:00:00Z")
}
