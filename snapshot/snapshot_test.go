package snapshot

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var testKey = bytes.Repeat([]byte{7}, 32)

func sample() (Tag, []Section) {
	tag := Tag{Tenant: "acme", Namespace: 7, Analysis: "bm25-v1", Embedder: "hash-384", Memories: 2,
		Watermark: time.Date(2026, 12, 6, 1, 2, 3, 4, time.UTC)}
	var e Enc
	e.String("mem-1")
	e.Uvarint(3)
	e.Varint(-5)
	e.Float32s([]float32{0.5, -1.25, 3})
	e.Strings([]string{"a", "", "bcd"})
	e.Uint32s([]uint32{1, 1 << 31})
	e.Uvarints([]uint64{9, 1 << 40})
	long := bytes.Repeat([]byte("0123456789"), 30)
	return tag, []Section{{Name: "memories", Data: e.Bytes()}, {Name: "empty"}, {Name: "long", Data: long}}
}

// encoded is the sample sealed in blocks of size bytes.
func encoded(t *testing.T, size int) []byte {
	t.Helper()
	tag, sections := sample()
	var buf bytes.Buffer
	if err := write(&buf, testKey, tag, sections, size); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// readBytes reads b as a snapshot file.
func readBytes(t *testing.T, b []byte) (Tag, map[string][]byte, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "index.snap")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return ReadFile(path, testKey)
}

func TestRoundTrip(t *testing.T) {
	want, sections := sample()
	// One block, several blocks, and a payload that ends exactly at a block's end (the last
	// block then holds nothing).
	_, payload, _ := payloadHead(want, sections)
	for _, size := range []int{blockSize, 64, int(payload) / 2} {
		got, read, err := readBytes(t, encoded(t, size))
		if err != nil {
			t.Fatalf("blocks of %d: %v", size, err)
		}
		if got != want {
			t.Fatalf("tag %+v, want %+v", got, want)
		}
		if len(read) != 3 || len(read["empty"]) != 0 || !bytes.Equal(read["long"], sections[2].Data) {
			t.Fatalf("blocks of %d: sections %v", size, read)
		}
		d := NewDec(read["memories"])
		if s, n, v, f := d.String(), d.Uvarint(), d.Varint(), d.Float32s(); s != "mem-1" || n != 3 || v != -5 ||
			len(f) != 3 || f[1] != -1.25 {
			t.Fatalf("decoded %q %d %d %v", s, n, v, f)
		}
		if s, u, v := d.Strings(), d.Uint32s(), d.Uvarints(); !slices.Equal(s, []string{"a", "", "bcd"}) ||
			!slices.Equal(u, []uint32{1, 1 << 31}) || !slices.Equal(v, []uint64{9, 1 << 40}) {
			t.Fatalf("columns %q %v %v", s, u, v)
		}
		if err := d.Done(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestEveryFlippedByteIsCorrupt(t *testing.T) {
	b := encoded(t, 64)
	for i := range b {
		bad := bytes.Clone(b)
		bad[i] ^= 0x41
		if _, _, err := readBytes(t, bad); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("byte %d of %d flipped: %v", i, len(b), err)
		}
	}
}

func TestEveryTruncationIsCorrupt(t *testing.T) {
	b := encoded(t, 64)
	for n := range len(b) {
		if _, _, err := readBytes(t, b[:n]); !errors.Is(err, ErrCorrupt) {
			t.Fatalf("cut at %d of %d: %v", n, len(b), err)
		}
	}
	if _, _, err := readBytes(t, append(bytes.Clone(b), 0)); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a byte appended: %v", err)
	}
}

// TestBlocksStayInPlace: a block moved, repeated, dropped or taken from another file of the
// same key does not open.
func TestBlocksStayInPlace(t *testing.T) {
	b, other := encoded(t, 64), encoded(t, 64)
	sealed := 64 + overhead
	block := func(b []byte, i int) []byte { return b[headerSize+i*sealed : headerSize+(i+1)*sealed] }
	swapped := bytes.Clone(b)
	copy(block(swapped, 1), block(b, 2))
	copy(block(swapped, 2), block(b, 1))
	repeated := bytes.Clone(b)
	copy(block(repeated, 2), block(b, 1))
	dropped := append(bytes.Clone(b[:headerSize+sealed]), b[headerSize+2*sealed:]...)
	foreign := bytes.Clone(b)
	copy(block(foreign, 1), block(other, 1))
	lastDropped := b[:headerSize+(len(b)-headerSize)/sealed*sealed] // only whole blocks left
	for name, bad := range map[string][]byte{"swapped": swapped, "repeated": repeated, "dropped": dropped,
		"from another file": foreign, "last dropped": lastDropped} {
		if _, _, err := readBytes(t, bad); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestOtherKeyOrFormat(t *testing.T) {
	b := encoded(t, 64)
	if bytes.Contains(b, []byte("mem-1")) || bytes.Contains(b, []byte("acme")) || bytes.Contains(b, []byte("0123")) {
		t.Fatal("the file holds the plain text")
	}
	path := filepath.Join(t.TempDir(), "index.snap")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ReadFile(path, bytes.Repeat([]byte{8}, 32)); !errors.Is(err, ErrCorrupt) {
		t.Errorf("another key: %v", err)
	}
	if _, _, err := ReadFile(path, nil); err == nil {
		t.Error("no key: read")
	}
	// The sealed file of the format before (one AES-GCM seal over the whole file).
	old := append([]byte("knowmind-index-sealed\n"), make([]byte, 100)...)
	if _, _, err := readBytes(t, old); !errors.Is(err, ErrCorrupt) {
		t.Errorf("format 2: %v", err)
	}
}

// TestFileOverTheCapIsNotRead: a file over MaxFileBytes is refused from its size, before
// anything is read or allocated.
func TestFileOverTheCapIsNotRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.snap")
	if err := os.WriteFile(path, encoded(t, blockSize), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, MaxFileBytes+1); err != nil { // sparse: no disk taken
		t.Fatal(err)
	}
	r, err := Open(path, testKey)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(fmtErr(err), "over the") {
		t.Fatalf("Open of %d bytes: %v", int64(MaxFileBytes+1), err)
	}
	if r != nil {
		t.Fatal("a reader returned")
	}
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTableMustCoverThePayload: sections whose sizes do not add up to what the blocks hold are
// refused, though every block opens.
func TestTableMustCoverThePayload(t *testing.T) {
	tag, sections := sample()
	head, _, err := payloadHead(tag, sections)
	if err != nil {
		t.Fatal(err)
	}
	for name, extra := range map[string][]byte{"a byte more": {1}, "sections short": nil} {
		var buf bytes.Buffer
		bw, err := newBlockWriter(&buf, testKey, 64)
		if err != nil {
			t.Fatal(err)
		}
		bw.Write(head)
		for i, s := range sections {
			if name == "sections short" && i == len(sections)-1 {
				s.Data = s.Data[:len(s.Data)-1]
			}
			bw.Write(s.Data)
		}
		bw.Write(extra)
		if err := bw.Close(); err != nil {
			t.Fatal(err)
		}
		if _, _, err := readBytes(t, buf.Bytes()); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReaderStreamsSections reads sections in pieces, passes over one, and reads float32s
// straight into their place.
func TestReaderStreamsSections(t *testing.T) {
	var floats Enc
	want := []float32{1, -2.5, 3e7, 0, 5}
	floats.b = Float32sAppend(floats.b, want)
	sections := []Section{{Name: "skipped", Data: bytes.Repeat([]byte{1}, 300)}, {Name: "floats", Data: floats.Bytes()},
		{Name: "tail", Data: []byte("end")}}
	var buf bytes.Buffer
	if err := write(&buf, testKey, Tag{Tenant: "t"}, sections, 64); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "index.snap")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(path, testKey)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if got := r.Sections(); len(got) != 3 || got[1] != (SectionInfo{Name: "floats", Size: 20}) {
		t.Fatalf("sections %v", got)
	}
	if s, err := r.Next(); err != nil || s.Name != "skipped" {
		t.Fatalf("first: %v %v", s, err)
	}
	if _, err := r.Read(make([]byte, 7)); err != nil {
		t.Fatal(err)
	}
	if s, err := r.Next(); err != nil || s.Name != "floats" {
		t.Fatalf("second: %v %v", s, err)
	}
	got := make([]float32, 5)
	if err := ReadFloat32s(r, got); err != nil || !slices.Equal(got, want) {
		t.Fatalf("floats %v %v", got, err)
	}
	if n, err := r.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("read past the section: %d %v", n, err)
	}
	if s, err := r.Next(); err != nil || s.Name != "tail" {
		t.Fatalf("third: %v %v", s, err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("after the last: %v", err)
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
	for name, read := range map[string]func(d *Dec) int{
		"Count":    func(d *Dec) int { return d.Count(8) },
		"Strings":  func(d *Dec) int { return len(d.Strings()) },
		"Uint32s":  func(d *Dec) int { return len(d.Uint32s()) },
		"Uvarints": func(d *Dec) int { return len(d.Uvarints()) },
	} {
		d := NewDec(e.Bytes())
		if n := read(d); n != 0 || !errors.Is(d.Err(), ErrCorrupt) {
			t.Fatalf("%s: %d, err %v", name, n, d.Err())
		}
		if s := d.String(); s != "" {
			t.Fatalf("%s: read after an error: %q", name, s)
		}
	}
	// Strings whose lengths add up to more than the bytes left.
	var s Enc
	s.Uvarint(2)
	s.Uvarint(3)
	s.Uvarint(3)
	s.b = append(s.b, "abcd"...)
	if d := NewDec(s.Bytes()); d.Strings() != nil || !errors.Is(d.Err(), ErrCorrupt) {
		t.Fatalf("strings cut short: %v", d.Err())
	}
}

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "7", "index.snap")
	tag, sections := sample()
	if err := WriteFile(path, testKey, tag, sections); err != nil {
		t.Fatal(err)
	}
	// A crash mid-write leaves a torn temporary file: the snapshot read is still the old one.
	if err := os.WriteFile(path+".tmp", encoded(t, 64)[:20], 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ReadFile(path, testKey); err != nil || got.Memories != 2 {
		t.Fatalf("after a torn temporary file: %+v %v", got, err)
	}
	tag.Memories = 3
	if err := WriteFile(path, testKey, tag, sections); err != nil {
		t.Fatal(err)
	}
	if got, _, err := ReadFile(path, testKey); err != nil || got.Memories != 3 {
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
	if err := WriteFile(path, testKey, tag, sections); err != nil {
		t.Fatal(err)
	}
	if left, _ := filepath.Glob(path + "*tmp"); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	if _, _, err := ReadFile(filepath.Join(dir, "none"), testKey); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
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
