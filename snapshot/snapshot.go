// Package snapshot is the file format of a tenant's derived search indexes (BM25 statistics,
// exact vectors, word vectors, the semantic model) as the service persists them beside its data,
// so that a restart reads them at disk speed instead of rebuilding them from Dgraph.
//
// A file is a tag (what it covers: tenant, namespace, analysis version, embedder, count,
// watermark) and named sections, sealed in blocks (seal.go): every block is authenticated and
// encrypted on its own, so a reader streams the file in bounded pieces and hands each section
// to its decoder as soon as its bytes are in, while the next ones are read. What a section
// holds is its writer's business (graph composes them with Enc and Dec); this package knows
// nothing of Dgraph, of bm25 or of the service. WriteFile replaces a file atomically: temporary
// file, fsync, rename, fsync of the directory — a crash at any moment leaves the old file, the
// new one, or none.
//
// The encoding is a plain length-prefixed binary (varints, raw little-endian floats, strings as
// columns) rather than encoding/gob: the bulk of a snapshot is float32 vectors and term ids,
// which this copies without reflection, and every length is checked against the bytes left
// before anything is allocated, so a corrupt file is an error, never a huge allocation.
package snapshot

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"time"
)

// ErrCorrupt reports a file that is not a whole snapshot: wrong magic or format, a block that
// does not open with the key, a section cut short, a file over MaxFileBytes.
var ErrCorrupt = errors.New("snapshot: corrupt")

// MaxFileBytes bounds a snapshot file: a larger one is neither written nor read (the tenant is
// then loaded from Dgraph at every open). A one-chunk memory takes about 2.3 KB of snapshot with
// 384-dimension vectors (docs/scale.md), so this holds about 1.7 million of them.
const MaxFileBytes = 4 << 30

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

func (t Tag) encode(e *Enc) {
	e.String(t.Tenant)
	e.Uvarint(t.Namespace)
	e.String(t.Analysis)
	e.String(t.Embedder)
	e.Uvarint(uint64(t.Memories))
	e.Varint(t.Watermark.UnixNano())
}

func decodeTag(d *Dec) Tag {
	t := Tag{Tenant: d.String(), Namespace: d.Uvarint(), Analysis: d.String(), Embedder: d.String(),
		Memories: d.Int(math.MaxInt32)}
	t.Watermark = time.Unix(0, d.Varint()).UTC()
	return t
}

// Section is one named part of a snapshot.
type Section struct {
	Name string
	Data []byte
}

// SectionInfo is a section's name and size, as a Reader announces it before its bytes.
type SectionInfo struct {
	Name string
	Size int
}

// maxSectionName bounds a section's name (the writer's names are short words).
const maxSectionName = 64

// The payload the blocks seal: the length of what follows up to the sections, the tag, the
// table of sections (count, then each one's name and size), then the sections' bytes in that
// order. The table comes first so that a reader knows every section's size, checked against
// the payload's size, before it allocates for any.
func payloadHead(tag Tag, sections []Section) ([]byte, int64, error) {
	var e Enc
	tag.encode(&e)
	e.Uvarint(uint64(len(sections)))
	seen := map[string]bool{}
	var total int64
	for _, s := range sections {
		if s.Name == "" || len(s.Name) > maxSectionName || seen[s.Name] {
			return nil, 0, fmt.Errorf("snapshot: section name %q", s.Name)
		}
		seen[s.Name] = true
		e.String(s.Name)
		e.Uvarint(uint64(len(s.Data)))
		total += int64(len(s.Data))
	}
	var head Enc
	head.Uvarint(uint64(e.Len()))
	head.b = append(head.b, e.Bytes()...)
	return head.Bytes(), int64(head.Len()) + total, nil
}

// Write writes a snapshot of tag and sections to w, sealed with key (32 bytes).
func Write(w io.Writer, key []byte, tag Tag, sections []Section) error {
	return write(w, key, tag, sections, blockSize)
}

func write(w io.Writer, key []byte, tag Tag, sections []Section, size int) error {
	head, payload, err := payloadHead(tag, sections)
	if err != nil {
		return err
	}
	if n := sealedSize(payload, size); n > MaxFileBytes {
		return fmt.Errorf("snapshot: %d bytes, over the %d a file may hold", n, int64(MaxFileBytes))
	}
	bw, err := newBlockWriter(w, key, size)
	if err != nil {
		return err
	}
	if _, err := bw.Write(head); err != nil {
		return err
	}
	for _, s := range sections {
		if _, err := bw.Write(s.Data); err != nil {
			return err
		}
	}
	return bw.Close()
}

// ReadFile reads and checks the whole snapshot at path, sealed with key (WriteFile), and returns
// its sections by name. A missing file is os.ErrNotExist; any other failure is ErrCorrupt.
func ReadFile(path string, key []byte) (Tag, map[string][]byte, error) {
	r, err := Open(path, key)
	if err != nil {
		return Tag{}, nil, err
	}
	defer r.Close()
	sections := map[string][]byte{}
	for {
		s, err := r.Next()
		if err == io.EOF {
			return r.Tag(), sections, nil
		}
		if err != nil {
			return Tag{}, nil, err
		}
		b := make([]byte, s.Size)
		if _, err := io.ReadFull(r, b); err != nil {
			return Tag{}, nil, err
		}
		sections[s.Name] = b
	}
}

// WriteFile replaces the snapshot at path atomically: it writes a temporary file beside it,
// fsyncs it, renames it over path and fsyncs the directory. The file is sealed with key (32
// bytes; AES-256-GCM, seal.go): snapshots hold every chunk's analysed terms and vector, and
// lie outside Dgraph's encryption at rest. A temporary file a crash left behind is harmless
// (Open never looks at it) and removed by a later WriteFile of that path once it is older than
// staleTemp.
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
	buf := bufio.NewWriterSize(f, 1<<20)
	if err := Write(buf, key, tag, sections); err != nil {
		return fail(err)
	}
	if err := buf.Flush(); err != nil {
		return fail(err)
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
