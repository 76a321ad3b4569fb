package snapshot

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func sample() (Tag, []Section) {
	tag := Tag{Tenant: "acme", Namespace: 7, Analysis: "bm25-v1", Embedder: "hash-384", Memories: 2,
		Watermark: time.Date(2026, 12, 6, 1, 2, 3, 4, time.UTC)}
	var e Enc
	e.String("mem-1")
	e.Uvarint(3)
	e.Varint(-5)
	e.Float32s([]float32{0.5, -1.25, 3})
	return tag, []Section{{Name: "memories", Data: e.Bytes()}, {Name: "empty"}}
}

func encoded(t *testing.T) []byte {
	t.Helper()
	tag, sections := sample()
	var buf bytes.Buffer
	if err := Write(&buf, tag, sections); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	tag, _ := sample()
	got, sections, err := Read(encoded(t))
	if err != nil {
		t.Fatal(err)
	}
	if got != tag {
		t.Fatalf("tag %+v, want %+v", got, tag)
	}
	if err := got.Matches(tag); err != nil {
		t.Fatal(err)
	}
	if len(sections) != 2 || len(sections["empty"]) != 0 {
		t.Fatalf("sections %v", sections)
	}
	d := NewDec(sections["memories"])
	if s, n, v, f := d.String(), d.Uvarint(), d.Varint(), d.Float32s(); s != "mem-1" || n != 3 || v != -5 ||
		len(f) != 3 || f[1] != -1.25 {
		t.Fatalf("decoded %q %d %d %v", s, n, v, f)
	}
	if err := d.Done(); err != nil {
		t.Fatal(err)
	}
}

func TestEveryFlippedByteIsCorrupt(t *testing.T) {
	b := encoded(t)
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x41
		if _, _, err := Read(bad); err == nil {
			t.Fatalf("byte %d flipped: read as whole", i)
		}
	}
}

func TestEveryTruncationIsCorrupt(t *testing.T) {
	b := encoded(t)
	for n := range len(b) {
		_, _, err := Read(b[:n])
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %v", n, len(b), err)
		}
	}
	if _, _, err := Read(append(bytes.Clone(b), 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a byte appended: %v", err)
	}
}

func TestWrongTagDoesNotMatch(t *testing.T) {
	tag, _ := sample()
	for name, other := range map[string]Tag{
		"tenant":    {Tenant: "other", Namespace: 7, Analysis: "bm25-v1", Embedder: "hash-384"},
		"namespace": {Tenant: "acme", Namespace: 8, Analysis: "bm25-v1", Embedder: "hash-384"},
		"analysis":  {Tenant: "acme", Namespace: 7, Analysis: "bm25-v2", Embedder: "hash-384"},
		"embedder":  {Tenant: "acme", Namespace: 7, Analysis: "bm25-v1", Embedder: "onnx"},
	} {
		if err := tag.Matches(other); err == nil {
			t.Errorf("%s differs: matched", name)
		}
	}
	if err := tag.Matches(Tag{Tenant: "acme", Namespace: 7, Analysis: "bm25-v1", Embedder: "hash-384", Memories: 9}); err != nil {
		t.Errorf("only the count differs: %v", err)
	}
}

func TestDecoderBoundsCounts(t *testing.T) {
	var e Enc
	e.Uvarint(1 << 40) // a count no section of this size can hold
	d := NewDec(e.Bytes())
	if n := d.Count(8); n != 0 || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatalf("count %d, err %v", n, d.Err())
	}
	if s := d.String(); s != "" {
		t.Fatalf("read after an error: %q", s)
	}
}

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "7", "index.snap")
	tag, sections := sample()
	if err := WriteFile(path, nil, tag, sections); err != nil {
		t.Fatal(err)
	}
	// A crash mid-write leaves a torn temporary file: the snapshot read is still the old one.
	if err := os.WriteFile(path+".tmp", encoded(t)[:20], 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ReadFile(path, nil); err != nil || got.Memories != 2 {
		t.Fatalf("after a torn temporary file: %+v %v", got, err)
	}
	tag.Memories = 3
	if err := WriteFile(path, nil, tag, sections); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ReadFile(path, nil); err != nil || got.Memories != 3 {
		t.Fatalf("after the rewrite: %+v %v", got, err)
	}
	// The torn file is young: it may be another process's write in progress. An old one goes.
	if _, err := os.Stat(path + ".tmp"); err != nil {
		t.Fatalf("young temporary file removed: %v", err)
	}
	old := time.Now().Add(-2 * staleTemp)
	if err := os.Chtimes(path+".tmp", old, old); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, nil, tag, sections); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(path + "*tmp"); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if _, _, err := ReadFile(filepath.Join(dir, "none"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestSealedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.snap")
	key := bytes.Repeat([]byte{7}, 32)
	tag, sections := sample()
	if err := WriteFile(path, key, tag, sections); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("mem-1")) || bytes.Contains(raw, []byte("acme")) {
		t.Fatal("the sealed file holds the plain text")
	}
	if got, _, err := ReadFile(path, key); err != nil || got != tag {
		t.Fatalf("read back: %+v %v", got, err)
	}
	for name, k := range map[string][]byte{"another key": bytes.Repeat([]byte{8}, 32), "no key": nil} {
		if _, _, err := ReadFile(path, k); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
	raw[len(raw)-1] ^= 1
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(path, key); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a flipped bit: %v", err)
	}
}

// TestFloat32sNBoundsItsCount: a count whose byte length wraps around (4·n past the int range)
// is an error, never an allocation of n values.
func TestFloat32sNBoundsItsCount(t *testing.T) {
	d := NewDec(make([]byte, 8))
	if v := d.Float32sN(1<<62 + 1); v != nil || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatalf("Float32sN(2^62+1) = %d values, err %v", len(v), d.Err())
	}
}
