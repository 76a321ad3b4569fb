package graph

import (
	"crypto/sha256"
	"encoding/hex"
)

// EdgeID is the id of the relation edge fromID -rel-> toID, stored as the
// edge's facet "id". It is derived, not random, so writing the same edge
// twice (a retried transaction, a repeated link) gives the same id, and an
// edge's inverse (toID -inverse-> fromID) has an id of its own.
func EdgeID(fromID, rel, toID string) string {
	sum := sha256.Sum256([]byte(fromID + "|" + rel + "|" + toID))
	return "edge_" + hex.EncodeToString(sum[:16])
}
