package textdoc

import (
	"cmp"
	"slices"
	"sync"
)

// Place is a memory's place in a sequence (Memory.sequence, Memory.position); the zero value
// is none.
type Place struct {
	Sequence string
	Position int
}

// Sequences holds which memory comes before and after which in the tenant's sequences, with
// each member's chunk uids, so that recall finds the memory before a candidate (and the one
// after a strong one) from a chunk uid without asking the store. Members of no sequence cost
// nothing. The zero value is ready to use; all methods are safe for concurrent use.
type Sequences struct {
	mu      sync.RWMutex
	members map[string][]member // sequence → its members by position (ties by memory id)
	of      map[string]held     // memory id → its place and chunk uids
	byRef   map[uint64]string   // chunk uid → memory id, for the members' chunks
}

type member struct {
	pos int
	id  string
}

type held struct {
	place Place
	refs  []uint64
}

// Set records memory id at place with its chunk uids, replacing what was held for it; a zero
// place forgets it.
func (s *Sequences) Set(id string, place Place, refs []uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(id)
	if place.Sequence == "" {
		return
	}
	if s.members == nil {
		s.members, s.of, s.byRef = map[string][]member{}, map[string]held{}, map[uint64]string{}
	}
	ms := s.members[place.Sequence]
	m := member{pos: place.Position, id: id}
	at, _ := slices.BinarySearchFunc(ms, m, compareMembers)
	s.members[place.Sequence] = slices.Insert(ms, at, m)
	refs = slices.Clone(refs)
	s.of[id] = held{place: place, refs: refs}
	for _, r := range refs {
		if r != 0 {
			s.byRef[r] = id
		}
	}
}

// Remove forgets memory id.
func (s *Sequences) Remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removeLocked(id)
}

func (s *Sequences) removeLocked(id string) {
	h, ok := s.of[id]
	if !ok {
		return
	}
	delete(s.of, id)
	for _, r := range h.refs {
		if s.byRef[r] == id {
			delete(s.byRef, r)
		}
	}
	ms := s.members[h.place.Sequence]
	if at, found := slices.BinarySearchFunc(ms, member{pos: h.place.Position, id: id}, compareMembers); found {
		ms = slices.Delete(ms, at, at+1)
	}
	if len(ms) == 0 {
		delete(s.members, h.place.Sequence)
	} else {
		s.members[h.place.Sequence] = ms
	}
}

func compareMembers(a, b member) int {
	if c := cmp.Compare(a.pos, b.pos); c != 0 {
		return c
	}
	return cmp.Compare(a.id, b.id)
}

// Before returns, for each of refs that is a chunk of a memory in a sequence with a memory
// before it (the nearest lower position), that memory's chunk uids.
func (s *Sequences) Before(refs []uint64) map[uint64][]uint64 {
	return s.neighbour(refs, -1)
}

// After returns, for each of refs that is a chunk of a memory in a sequence with a memory after
// it (the nearest higher position), that memory's chunk uids.
func (s *Sequences) After(refs []uint64) map[uint64][]uint64 {
	return s.neighbour(refs, +1)
}

func (s *Sequences) neighbour(refs []uint64, dir int) map[uint64][]uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if len(s.byRef) == 0 {
		return nil
	}
	out := map[uint64][]uint64{}
	for _, r := range refs {
		id, ok := s.byRef[r]
		if !ok {
			continue
		}
		h := s.of[id]
		ms := s.members[h.place.Sequence]
		at, _ := slices.BinarySearchFunc(ms, member{pos: h.place.Position, id: id}, compareMembers)
		// Members sharing a position are one place: the neighbour is the nearest member at
		// another position.
		for j := at + dir; j >= 0 && j < len(ms); j += dir {
			if ms[j].pos != h.place.Position {
				out[r] = s.of[ms[j].id].refs
				break
			}
		}
	}
	return out
}

// Len is how many memories are held in sequences.
func (s *Sequences) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.of)
}

// Member is one memory held in a sequence, for a snapshot.
type Member struct {
	ID    string
	Place Place
	Refs  []uint64
}

// Members lists every memory held, in no particular order.
func (s *Sequences) Members() []Member {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]Member, 0, len(s.of))
	for id, h := range s.of {
		out = append(out, Member{ID: id, Place: h.place, Refs: h.refs})
	}
	return out
}

// Replace swaps in what other holds (other is not used afterwards).
func (s *Sequences) Replace(other *Sequences) {
	other.mu.Lock()
	members, of, byRef := other.members, other.of, other.byRef
	other.mu.Unlock()
	s.mu.Lock()
	s.members, s.of, s.byRef = members, of, byRef
	s.mu.Unlock()
}
