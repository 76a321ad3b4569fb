package textdoc

import (
	"reflect"
	"testing"
)

// A conversation of four turns (chunk uids 10·turn, the third with two chunks), one turn
// moved, one removed, and an unrelated memory: each turn finds the turn before and after it.
func TestSequencesNeighbours(t *testing.T) {
	var s Sequences
	chat := func(pos int) Place { return Place{Sequence: "chat 1", Position: pos} }
	s.Set("q", chat(1), []uint64{10})
	s.Set("a", chat(2), []uint64{20})
	s.Set("c", chat(3), []uint64{30, 31})
	s.Set("d", chat(5), []uint64{50}) // gaps are fine
	s.Set("x", Place{}, []uint64{90}) // in no sequence: not held
	s.Set("o", Place{Sequence: "chat 2", Position: 2}, []uint64{70})
	if s.Len() != 5 {
		t.Fatalf("held %d, want 5", s.Len())
	}
	want := map[uint64][]uint64{20: {10}, 30: {20}, 31: {20}, 50: {30, 31}}
	if got := s.Before([]uint64{10, 20, 30, 31, 50, 70, 90, 99}); !reflect.DeepEqual(got, want) {
		t.Fatalf("before: %v, want %v", got, want)
	}
	want = map[uint64][]uint64{10: {20}, 20: {30, 31}, 31: {50}}
	if got := s.After([]uint64{10, 20, 31, 50, 70}); !reflect.DeepEqual(got, want) {
		t.Fatalf("after: %v, want %v", got, want)
	}

	// A memory set again moves; one removed leaves a gap its neighbours close.
	s.Set("q", chat(4), []uint64{10})
	s.Remove("c")
	want = map[uint64][]uint64{10: {20}, 50: {10}}
	if got := s.Before([]uint64{10, 20, 30, 50}); !reflect.DeepEqual(got, want) {
		t.Fatalf("before after the move: %v, want %v", got, want)
	}
	// Two memories at one position (a fact and its new version) are one place.
	s.Set("a2", chat(2), []uint64{21})
	want = map[uint64][]uint64{10: {20}}
	if got := s.Before([]uint64{10, 20, 21}); !reflect.DeepEqual(got, want) && !reflect.DeepEqual(got, map[uint64][]uint64{10: {21}}) {
		t.Fatalf("before with a shared position: %v", got)
	}
	if got := s.After([]uint64{20, 21}); len(got[20]) != 1 || got[20][0] != 10 || len(got[21]) != 1 || got[21][0] != 10 {
		t.Fatalf("after with a shared position: %v", got)
	}

	var copied Sequences
	for _, m := range s.Members() {
		copied.Set(m.ID, m.Place, m.Refs)
	}
	var swapped Sequences
	swapped.Replace(&copied)
	if got, want := swapped.Before([]uint64{10, 50}), s.Before([]uint64{10, 50}); !reflect.DeepEqual(got, want) {
		t.Fatalf("rebuilt from Members: %v, want %v", got, want)
	}
	s.Set("q", Place{}, []uint64{10})
	if got := s.Before([]uint64{10, 50}); len(got) != 1 || len(got[50]) != 1 || got[50][0] == 10 {
		t.Fatalf("q left its sequence, still a neighbour: %v", got)
	}
}
