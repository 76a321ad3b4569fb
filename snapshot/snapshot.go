// Package snapshot is the file format of a tenant's derived search indexes (BM25 statistics,
// exact vectors, word vectors, the semantic model) as the service persists them beside its data,
// so that a restart reads them at disk speed instead of rebuilding them from Dgraph.
//
// A file is a tag (what it covers: tenant, namespace, analysis version, embedder, count,
// watermark) and named sections, each with a CRC-32C of its bytes, ending in a section that
// counts the others, so a torn or truncated file is told apart from a whole one. What a section
// holds is its writer's business (graph composes them with Enc and Dec); this package knows
// nothing of Dgraph, of bm25 or of the service. WriteFile replaces a file atomically: temporary
// file, fsync, rename, fsync of the directory — a crash at any moment leaves the old file, the
// new one, or none.
//
// The encoding is a plain length-prefixed binary (varints, raw little-endian floats) rather
// than encoding/gob: the bulk of a snapshot is float32 vectors and term ids, which this copies
// without reflection, and every length is checked against the bytes left before anything is
// allocated, so a corrupt file is an error, never a huge allocation.
package snapshot

import (
	"bufio"
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
	"unsafe"
)

// magic starts every snapshot file; formatVersion changes with the layout of this package's
// framing and tag (not with what sections hold: that is Tag.Analysis and the writer's section
// names). Version 2 dropped the tag's Dgraph read timestamp, which nothing filled: the
// catch-up starts from the watermark, a time the store's updated_at index answers to.
const (
	magic         = "knowmind-index\n"
	formatVersion = 2
	endSection    = "end"
	tagSection    = "tag"
)

// ErrCorrupt reports a file that is not a whole snapshot: wrong magic or format, a checksum
// that fails, a section cut short, a missing end.
var ErrCorrupt = errors.New("snapshot: corrupt")

// Tag says what a snapshot covers. A reader compares the identity fields (Matches) with its
// own before trusting anything, and catches up from Watermark.
type Tag struct {
	Tenant    string
	Namespace uint64
	// Analysis identifies the text analysis the terms were produced by (bm25.Analysis.ID): any
	// change to tokenizer, stemmer, decompounder or word list makes every snapshot stale.
	Analysis string
	// Embedder is the embedder id the vectors are from ("" when no vectors are held).
	Embedder string
	// Memories is how many indexed memories the snapshot holds.
	Memories int
	// Watermark: every write committed before it is in the snapshot (later ones may be too).
	Watermark time.Time
}

// Matches tells whether a snapshot tagged t may stand in for want: same tenant, namespace,
// analysis and embedder. Count and watermark are for the catch-up, not the identity.
func (t Tag) Matches(want Tag) error {
	switch {
	case t.Tenant != want.Tenant:
		return fmt.Errorf("snapshot: tenant %q, want %q", t.Tenant, want.Tenant)
	case t.Namespace != want.Namespace:
		return fmt.Errorf("snapshot: namespace %d, want %d", t.Namespace, want.Namespace)
	case t.Analysis != want.Analysis:
		return fmt.Errorf("snapshot: analysis %q, want %q", t.Analysis, want.Analysis)
	case t.Embedder != want.Embedder:
		return fmt.Errorf("snapshot: embedder %q, want %q", t.Embedder, want.Embedder)
	}
	return nil
}

func (t Tag) encode() []byte {
	var e Enc
	e.String(t.Tenant)
	e.Uvarint(t.Namespace)
	e.String(t.Analysis)
	e.String(t.Embedder)
	e.Uvarint(uint64(t.Memories))
	e.Varint(t.Watermark.UnixNano())
	return e.Bytes()
}

func decodeTag(b []byte) (Tag, error) {
	d := NewDec(b)
	t := Tag{Tenant: d.String(), Namespace: d.Uvarint(), Analysis: d.String(), Embedder: d.String(),
		Memories: d.Int(math.MaxInt32)}
	t.Watermark = time.Unix(0, d.Varint()).UTC()
	return t, d.Done()
}

// Section is one named part of a snapshot.
type Section struct {
	Name string
	Data []byte
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// Write writes a snapshot of tag and sections to w.
func Write(w io.Writer, tag Tag, sections []Section) error {
	var head Enc
	head.b = append(head.b, magic...)
	head.Uvarint(formatVersion)
	if _, err := w.Write(head.Bytes()); err != nil {
		return err
	}
	all := append([]Section{{Name: tagSection, Data: tag.encode()}}, sections...)
	var end Enc
	end.Uvarint(uint64(len(all)))
	all = append(all, Section{Name: endSection, Data: end.Bytes()})
	for _, s := range all {
		var frame Enc
		frame.String(s.Name)
		frame.Uvarint(uint64(len(s.Data)))
		sum := crc32.Update(crc32.Checksum([]byte(s.Name), castagnoli), castagnoli, s.Data)
		frame.b = binary.LittleEndian.AppendUint32(frame.b, sum)
		if _, err := w.Write(frame.Bytes()); err != nil {
			return err
		}
		if _, err := w.Write(s.Data); err != nil {
			return err
		}
	}
	return nil
}

// Read parses a whole snapshot held in b, checking the framing and every section's checksum.
// The sections' Data alias b.
func Read(b []byte) (Tag, map[string][]byte, error) {
	if !bytes.HasPrefix(b, []byte(magic)) {
		return Tag{}, nil, fmt.Errorf("%w: not a snapshot file", ErrCorrupt)
	}
	d := NewDec(b[len(magic):])
	if v := d.Uvarint(); d.err == nil && v != formatVersion {
		return Tag{}, nil, fmt.Errorf("%w: format %d, want %d", ErrCorrupt, v, formatVersion)
	}
	sections := map[string][]byte{}
	count := 0
	for {
		name := d.String()
		n := d.Int(len(d.b))
		sum := d.fixed32()
		data := d.take(n)
		if d.err != nil {
			return Tag{}, nil, fmt.Errorf("%w: section %d cut short", ErrCorrupt, count)
		}
		if crc32.Update(crc32.Checksum([]byte(name), castagnoli), castagnoli, data) != sum {
			return Tag{}, nil, fmt.Errorf("%w: checksum of section %q", ErrCorrupt, name)
		}
		if name == endSection {
			if NewDec(data).Uvarint() != uint64(count) || len(d.b) != 0 {
				return Tag{}, nil, fmt.Errorf("%w: end does not match its sections", ErrCorrupt)
			}
			break
		}
		if _, dup := sections[name]; dup {
			return Tag{}, nil, fmt.Errorf("%w: section %q twice", ErrCorrupt, name)
		}
		sections[name] = data
		count++
	}
	raw, ok := sections[tagSection]
	if !ok {
		return Tag{}, nil, fmt.Errorf("%w: no tag", ErrCorrupt)
	}
	delete(sections, tagSection)
	tag, err := decodeTag(raw)
	if err != nil {
		return Tag{}, nil, fmt.Errorf("%w: tag: %v", ErrCorrupt, err)
	}
	return tag, sections, nil
}

// ReadFile reads and checks the snapshot at path (Read), sealed with key when key is not nil
// (WriteFile). A missing file is os.ErrNotExist; one that does not open with key is ErrCorrupt.
func ReadFile(path string, key []byte) (Tag, map[string][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Tag{}, nil, err
	}
	if key != nil {
		if b, err = open(key, b); err != nil {
			return Tag{}, nil, err
		}
	}
	return Read(b)
}

// sealedMagic starts a sealed snapshot: a nonce and the AES-256-GCM sealed plain snapshot follow.
const sealedMagic = "knowmind-index-sealed\n"

// seal encrypts and authenticates a whole plain snapshot with key (32 bytes).
func seal(key, plain []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte(sealedMagic), nonce...)
	return aead.Seal(out, nonce, plain, []byte(sealedMagic)), nil
}

// open undoes seal.
func open(key, b []byte) ([]byte, error) {
	aead, err := newAEAD(key)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(b, []byte(sealedMagic)) || len(b) < len(sealedMagic)+aead.NonceSize() {
		return nil, fmt.Errorf("%w: not a sealed snapshot", ErrCorrupt)
	}
	b = b[len(sealedMagic):]
	// In place: the file's bytes are this reader's, and a second buffer of a 100k tenant's
	// size would double what opening it allocates.
	sealed := b[aead.NonceSize():]
	plain, err := aead.Open(sealed[:0], b[:aead.NonceSize()], sealed, []byte(sealedMagic))
	if err != nil {
		return nil, fmt.Errorf("%w: does not open with this key", ErrCorrupt)
	}
	return plain, nil
}

func newAEAD(key []byte) (cipher.AEAD, error) {
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("snapshot: key: %w", err)
	}
	return cipher.NewGCM(block)
}

// WriteFile replaces the snapshot at path atomically: it writes a temporary file beside it,
// fsyncs it, renames it over path and fsyncs the directory. With a key (32 bytes) the whole
// file is sealed with AES-256-GCM: snapshots hold every chunk's analysed terms and vector, and
// lie outside Dgraph's encryption at rest. A temporary file a crash left
// behind is harmless (Read never looks at it) and removed by a later WriteFile of that path
// once it is older than staleTemp.
func WriteFile(path string, key []byte, tag Tag, sections []Section) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	removeStaleTemps(path)
	// A name of its own: two processes on one data dir (serve and stdio) may write at once.
	f, err := os.CreateTemp(dir, filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if key == nil {
		buf := bufio.NewWriterSize(f, 1<<20)
		if err := Write(buf, tag, sections); err != nil {
			return fail(err)
		}
		if err := buf.Flush(); err != nil {
			return fail(err)
		}
	} else {
		var plain bytes.Buffer
		if err := Write(&plain, tag, sections); err != nil {
			return fail(err)
		}
		sealed, err := seal(key, plain.Bytes())
		if err != nil {
			return fail(err)
		}
		if _, err := f.Write(sealed); err != nil {
			return fail(err)
		}
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("snapshot: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("snapshot: %w", err)
	}
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("snapshot: sync %s: %w", dir, err)
	}
	return nil
}

// staleTemp is how old a temporary file must be before a write takes it for a crash's leftover
// rather than another process's write in progress.
const staleTemp = time.Hour

func removeStaleTemps(path string) {
	temps, _ := filepath.Glob(path + ".*tmp")
	for _, tmp := range temps {
		if fi, err := os.Stat(tmp); err == nil && time.Since(fi.ModTime()) > staleTemp {
			os.Remove(tmp)
		}
	}
}

// Enc appends the values a section is made of. The zero value is ready to use.
type Enc struct {
	b []byte
}

// Bytes returns what was appended.
func (e *Enc) Bytes() []byte { return e.b }

// Len is the number of bytes appended.
func (e *Enc) Len() int { return len(e.b) }

// Uvarint appends v.
func (e *Enc) Uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

// Varint appends v.
func (e *Enc) Varint(v int64) { e.b = binary.AppendVarint(e.b, v) }

// String appends s with its length.
func (e *Enc) String(s string) {
	e.Uvarint(uint64(len(s)))
	e.b = append(e.b, s...)
}

// Float32s appends v with its length, each value as 4 little-endian bytes.
func (e *Enc) Float32s(v []float32) {
	e.Uvarint(uint64(len(v)))
	e.b = Float32sAppend(e.b, v)
}

// Float32sAppend appends v's values, 4 little-endian bytes each, without a length.
func Float32sAppend(b []byte, v []float32) []byte {
	b = append(b, make([]byte, 4*len(v))...)
	out := b[len(b)-4*len(v):]
	for i, f := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(f))
	}
	return b
}

// Dec reads what Enc wrote. The first error sticks: every later read returns zero values, and
// Err or Done reports it, so a decoder reads a whole section and checks once.
type Dec struct {
	b   []byte
	err error
}

// NewDec reads b.
func NewDec(b []byte) *Dec { return &Dec{b: b} }

// Err is the first error met.
func (d *Dec) Err() error { return d.err }

// Done is Err, or an error when bytes are left over.
func (d *Dec) Done() error {
	if d.err == nil && len(d.b) != 0 {
		d.err = fmt.Errorf("%w: %d bytes left over", ErrCorrupt, len(d.b))
	}
	return d.err
}

// Left is the number of bytes not read yet.
func (d *Dec) Left() int { return len(d.b) }

func (d *Dec) fail(what string) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrCorrupt, what)
	}
	d.b = nil
}

// Uvarint reads a Uvarint.
func (d *Dec) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Varint reads a Varint.
func (d *Dec) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.fail("bad varint")
		return 0
	}
	d.b = d.b[n:]
	return v
}

// Int reads a Uvarint that must be at most limit (a count about to size an allocation: pass
// what the bytes left can hold).
func (d *Dec) Int(limit int) int {
	v := d.Uvarint()
	if v > uint64(max(limit, 0)) {
		d.fail(fmt.Sprintf("count %d over %d", v, limit))
		return 0
	}
	return int(v)
}

// Count reads a count of items each at least minBytes long, checked against the bytes left.
func (d *Dec) Count(minBytes int) int {
	return d.Int(len(d.b) / max(minBytes, 1))
}

func (d *Dec) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n < 0 || n > len(d.b) {
		d.fail("cut short")
		return nil
	}
	out := d.b[:n:n]
	d.b = d.b[n:]
	return out
}

func (d *Dec) fixed32() uint32 {
	b := d.take(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

// String reads a String.
func (d *Dec) String() string {
	return string(d.take(d.Int(len(d.b))))
}

// Float32s reads Float32s.
func (d *Dec) Float32s() []float32 {
	n := d.Int(len(d.b) / 4)
	return d.Float32sN(n)
}

// Float32sN reads n values written by Float32sAppend.
func (d *Dec) Float32sN(n int) []float32 {
	if d.err == nil && (n < 0 || n > len(d.b)/4) { // before 4·n, which can wrap around
		d.fail("cut short")
	}
	b := d.take(4 * n)
	if b == nil {
		return nil
	}
	out := make([]float32, n)
	if littleEndian && n > 0 {
		// The file's layout is this machine's: one copy instead of a conversion per value.
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*n), b)
		return out
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

// littleEndian: float32s are laid out in memory as the file holds them.
var littleEndian = binary.NativeEndian.Uint16([]byte{1, 0}) == 1
