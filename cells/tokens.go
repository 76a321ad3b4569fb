package cells

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph"
)

// Authentication follows the tenant's cell. A token is a row of one cluster's default namespace
// naming its tenant; a move copies the tenant's rows to the target cell, so a token may have a
// row in several cells, and only the one in the cell the directory places its tenant in counts:
// that is where `knowmind token create` and `revoke` write while the tenant lives there. A row
// found elsewhere (the source's copy after a move) only says which tenant to ask about.
//
// Token ids are uids, local to a cluster: a token of a cell other than home is named
// "cell:0x…" (QualifyTokenID), so that two cells' uids never mix in the service.

// QualifyTokenID is the service-wide id of the token id in cell: home's ids as they are.
func QualifyTokenID(cell, id string) string {
	if cell == HomeCell || cell == "" {
		return id
	}
	return cell + ":" + id
}

// SplitTokenID is the cell and the cluster-local id of a service-wide token id.
func SplitTokenID(id string) (cell, local string) {
	if c, l, ok := strings.Cut(id, ":"); ok {
		return c, l
	}
	return HomeCell, id
}

// maxTokenCells bounds the remembered token → cell entries (a hash and a name each).
const maxTokenCells = 100_000

// VerifyToken verifies an opaque token against the row in its tenant's cell. It asks the cell
// that last answered for this token first, then home, then the other cells; a row whose tenant
// the directory places elsewhere sends the lookup to that cell. The work is bounded by the
// number of cells. A cell that cannot be asked leaves the answer unavailable, never a copy's.
func (s *Serving) VerifyToken(ctx context.Context, plaintext string) (graph.Token, error) {
	if err := s.reload(); err != nil {
		return graph.Token{}, knowmind.Errorf(knowmind.EUNAVAILABLE, "the cell directory cannot be read; retry shortly")
	}
	hash := graph.HashToken(plaintext)
	s.mu.Lock()
	order := make([]string, 0, len(s.dir.Cells)+2)
	if c, ok := s.tokenCells[hash]; ok {
		order = append(order, c)
	}
	order = append(order, HomeCell)
	order = append(order, s.dir.CellNames()...)
	s.mu.Unlock()

	asked := map[string]bool{}
	var unavailable error
	for len(order) > 0 {
		name := order[0]
		order = order[1:]
		if asked[name] {
			continue
		}
		asked[name] = true
		c, err := s.cellClient(ctx, name)
		if err != nil {
			s.log.Error("cell not reachable", "cell", name, "err", err)
			unavailable = knowmind.Errorf(knowmind.EUNAVAILABLE, "cell %s cannot be reached to verify the token; retry shortly", name)
			continue
		}
		tok, found, err := c.LookupToken(ctx, plaintext)
		if err != nil {
			if e := knowmind.AsError(err); e != nil && e.Code == knowmind.EUNAUTHORIZED {
				return graph.Token{}, err // malformed: no cell knows it
			}
			unavailable = err
			continue
		}
		if !found {
			continue
		}
		if owner := s.cellOf(tok.Tenant); owner != name {
			if asked[owner] {
				// The owner was asked and has no row: the copy here is not the token.
				continue
			}
			order = append([]string{owner}, order...)
			continue
		}
		s.mu.Lock()
		if len(s.tokenCells) >= maxTokenCells {
			s.tokenCells = map[string]string{}
		}
		s.tokenCells[hash] = name
		s.mu.Unlock()
		tok.ID = QualifyTokenID(name, tok.ID)
		return tok, tok.Check(time.Now())
	}
	if unavailable != nil {
		return graph.Token{}, unavailable
	}
	return graph.Token{}, knowmind.Errorf(knowmind.EUNAUTHORIZED, "invalid token")
}

// TouchToken records a token's last use in its cell (id as VerifyToken named it).
func (s *Serving) TouchToken(ctx context.Context, id string, at time.Time) error {
	cell, local := SplitTokenID(id)
	c, err := s.cellClient(ctx, cell)
	if err != nil {
		return err
	}
	return c.TouchToken(ctx, local, at)
}

// cellOf is the cell the directory places tenant in.
func (s *Serving) cellOf(tenant string) string {
	p, _, listed := s.placement(tenant)
	if !listed || p.Cell == "" {
		return HomeCell
	}
	return p.Cell
}

// cellClient is the client of the named cell: home's, or one opened from the directory's entry.
func (s *Serving) cellClient(ctx context.Context, name string) (*graph.Client, error) {
	if name == HomeCell {
		return s.home, nil
	}
	s.mu.Lock()
	c, ok := s.dir.Cells[name]
	s.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("the directory names no cell %s", name)
	}
	return s.client(ctx, name, c)
}
