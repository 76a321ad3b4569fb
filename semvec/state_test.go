package semvec

import (
	"fmt"
	"reflect"
	"testing"
)

func TestStateRoundTrip(t *testing.T) {
	var docs []Doc
	for i := range 60 {
		docs = append(docs, Doc{Ref: uint64(i + 1), Terms: []string{"cat", fmt.Sprint("w", i%7), fmt.Sprint("v", i%5), "mat"}})
	}
	m := Build(docs, Options{Vocab: 32, Dims: 4, MinDF: 1})
	back, err := FromState(m.State())
	if err != nil {
		t.Fatal(err)
	}
	q := m.Query([]string{"w1", "v2"})
	if got, want := back.TopN(back.Query([]string{"w1", "v2"}), 5, nil), m.TopN(q, 5, nil); !reflect.DeepEqual(got, want) {
		t.Fatalf("top %v, want %v", got, want)
	}
	bad := m.State()
	bad.IDF = bad.IDF[1:]
	if _, err := FromState(bad); err == nil {
		t.Fatal("an inconsistent state was taken")
	}
}
