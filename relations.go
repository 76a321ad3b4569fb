package knowmind

import "time"

// LinkResult is what knowmind_link returns: the id of the edge as asked for
// and of its materialised inverse. Both are stable: linking again returns
// the same ids.
type LinkResult struct {
	EdgeID        string `json:"edge_id"`
	InverseEdgeID string `json:"inverse_edge_id"`
	// With to_title (a note source): ToID is the note the title resolved to; Pending says no
	// note has the title yet, so the link waits as a forward reference (edge ids empty) and is
	// made when a note of that title is created in the project.
	ToID    string `json:"to_id,omitempty"`
	Pending bool   `json:"pending,omitempty"`
}

// EdgeMeta is what a link records about itself as edge facets (seed 001, memory_link):
// how sure the linker was, who linked (a token id, or the engine: "capture" for a detected
// contradiction) and an optional reason (the seed's metadata). An edge written without them
// reads as confidence 1 by "knowmind_link".
type EdgeMeta struct {
	Confidence *float64 // 0..1; nil = 1
	CreatedBy  string
	Reason     string
}

// MaxEdgeReasonChars bounds EdgeMeta.Reason.
const MaxEdgeReasonChars = 500

// MaxConfidence is the most a link's confidence may be (EdgeMeta.Confidence is 0..1).
const MaxConfidence = 1

// UnlinkResult is what knowmind_unlink returns. Deleted means the edge and
// its inverse are no longer current; their record stays, closed with
// valid_to, for point-in-time queries.
type UnlinkResult struct {
	Deleted bool `json:"deleted"`
}

// RelationsResult is what knowmind_list_relations returns: the current
// (open) edges of one memory. Each link appears once per end: as outgoing
// on the node it was linked from and as incoming on the node it points to
// (the materialised inverse is not listed as a second edge).
type RelationsResult struct {
	Outgoing []OutEdge `json:"outgoing"`
	Incoming []InEdge  `json:"incoming"`
}

// OutEdge is an edge from the listed memory to another one.
type OutEdge struct {
	RelType   string     `json:"rel_type"`
	To        string     `json:"to"`
	Title     string     `json:"title,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ValidFrom time.Time  `json:"valid_from"`
	ValidTo   *time.Time `json:"valid_to,omitempty"`
	EdgeID    string     `json:"edge_id"`
}

// InEdge is an edge from another memory to the listed one.
type InEdge struct {
	RelType   string     `json:"rel_type"`
	From      string     `json:"from"`
	Title     string     `json:"title,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	ValidFrom time.Time  `json:"valid_from"`
	ValidTo   *time.Time `json:"valid_to,omitempty"`
	EdgeID    string     `json:"edge_id"`
}
