package wordvec

import (
	"reflect"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	m := New(4) // fewer rows than terms: some terms hold none
	docs := [][]string{{"cat", "mat", "sat"}, {"dog", "cat", "bark"}, {"mat", "red"}, {"dog", "park"}}
	for _, d := range docs {
		m.Add(d)
	}
	m.Remove(docs[2]) // a free row
	back, err := FromState(m.State())
	if err != nil {
		t.Fatal(err)
	}
	q := []string{"cat"}
	texts := [][]string{{"dog"}, {"sat"}, {"park", "bark"}}
	if got, want := back.Similarity(q, texts), m.Similarity(q, texts); !reflect.DeepEqual(got, want) {
		t.Fatalf("similarity %v, want %v", got, want)
	}
	back.Add([]string{"cat", "hat"}) // and it keeps counting
	m.Add([]string{"cat", "hat"})
	if got, want := back.Similarity(q, texts), m.Similarity(q, texts); !reflect.DeepEqual(got, want) {
		t.Fatalf("after an add: %v, want %v", got, want)
	}
	bad := m.State()
	bad.Row[0] = 99
	if _, err := FromState(bad); err == nil {
		t.Fatal("a row out of range was taken")
	}
}
