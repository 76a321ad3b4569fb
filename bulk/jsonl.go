// Package bulk holds the file side of knowmind import and export: the JSONL
// format (one knowmind.Record a line, see docs/bulk.md), Markdown folders
// (an Obsidian vault: one document a note, [[wiki links]] as REFERENCES
// relations) and the import loop (batches, resumable cursor, progress).
//
// It knows nothing of Dgraph: the loop writes through the Target interface,
// which *graph.Tenant implements.
package bulk

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/knowmind/knowmind"
)

// Writer writes the JSONL format: a header line, then one record a line.
type Writer struct {
	enc *json.Encoder
	n   int
}

// NewWriter writes the header naming the format and the tenant.
func NewWriter(w io.Writer, tenant string) (*Writer, error) {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	now := time.Now().UTC()
	if err := enc.Encode(knowmind.Record{Type: knowmind.RecordHeader, Format: knowmind.BulkFormat,
		Version: knowmind.BulkFormatVersion, Tenant: tenant, ExportedAt: &now}); err != nil {
		return nil, err
	}
	return &Writer{enc: enc}, nil
}

// Write writes one record as a line.
func (w *Writer) Write(r knowmind.Record) error {
	w.n++
	return w.enc.Encode(r)
}

// Records is how many records were written (the header not counted).
func (w *Writer) Records() int { return w.n }

// JSONL is a JSONL file as an import source: entries in file order, then relations in
// file order (so a relation may name a memory further down the file).
type JSONL struct {
	path      string
	key       string
	entries   int
	relations int
}

// OpenJSONL reads the file once to count its records and hash them (the hash
// names the import's cursor: changed records are a new import; header lines
// and blank lines do not count).
func OpenJSONL(path string) (*JSONL, error) {
	s := &JSONL{path: path}
	h := sha256.New()
	err := s.scan(func(line int, raw []byte) error {
		rec, err := parseRecord(raw)
		if err == nil && rec.Type == knowmind.RecordHeader {
			return nil // an export's header differs by its time; the records are the source
		}
		h.Write(raw)
		h.Write([]byte{'\n'})
		if err == nil && knowmind.AfterEntries(rec.Type) {
			s.relations++
		} else {
			s.entries++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	s.key = "jsonl:" + hex.EncodeToString(h.Sum(nil))[:40]
	return s, nil
}

func (s *JSONL) Name() string { return s.path }
func (s *JSONL) Key() string  { return s.key }
func (s *JSONL) Total() int   { return s.entries + s.relations }

func (s *JSONL) Each(ctx context.Context, phase Phase, fn func(Item) error) error {
	return s.scan(func(line int, raw []byte) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		rec, err := parseRecord(raw)
		if err == nil && rec.Type == knowmind.RecordHeader {
			return nil
		}
		isRelation := err == nil && knowmind.AfterEntries(rec.Type)
		if isRelation != (phase == PhaseRelations) {
			return nil
		}
		return fn(Item{Where: fmt.Sprintf("%s:%d", s.path, line), Record: rec, Err: err})
	})
}

// scan calls fn with every non-blank line and its number.
func (s *JSONL) scan(fn func(line int, raw []byte) error) error {
	f, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), knowmind.MaxRecordBytes)
	line := 0
	for sc.Scan() {
		line++
		raw := bytes.TrimSpace(sc.Bytes())
		if len(raw) == 0 {
			continue
		}
		if err := fn(line, raw); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: after line %d: %w", s.path, line, err)
	}
	return nil
}

// parseRecord decodes one line strictly: unknown fields and unknown types are errors.
func parseRecord(raw []byte) (knowmind.Record, error) {
	var r knowmind.Record
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return r, knowmind.InvalidParam("line", "not a record: %v", err)
	}
	if dec.More() {
		return r, knowmind.InvalidParam("line", "more than one JSON value on the line")
	}
	switch r.Type {
	case knowmind.RecordHeader, knowmind.RecordMemory, knowmind.RecordDocument, knowmind.RecordRelation:
		return r, nil
	case knowmind.RecordGoal, knowmind.RecordDraft, knowmind.RecordProject, knowmind.RecordNote,
		knowmind.RecordRevision, knowmind.RecordForward, knowmind.RecordVisit,
		knowmind.RecordEntity, knowmind.RecordCalibration, knowmind.RecordCaptureSettings:
		// Each of these holds its object in the field of its type's name (a note its note fields).
		objects := map[string]bool{knowmind.RecordGoal: r.Goal != nil, knowmind.RecordDraft: r.Draft != nil,
			knowmind.RecordProject: r.Project != nil, knowmind.RecordNote: r.Note != nil, knowmind.RecordRevision: r.Revision != nil,
			knowmind.RecordForward: r.Forward != nil, knowmind.RecordVisit: r.Visit != nil,
			knowmind.RecordEntity: r.Entity != nil, knowmind.RecordCalibration: r.Calibration != nil,
			knowmind.RecordCaptureSettings: r.CaptureSettings != nil}
		for typ, set := range objects {
			if set != (typ == r.Type) {
				return r, knowmind.InvalidParam(r.Type, "a %s record holds its object in %q, and no other", r.Type, r.Type)
			}
		}
		return r, nil
	}
	return r, knowmind.InvalidParam("type", "type must be memory, document, note, project, relation, revision, forward, visit, goal, draft, entity, calibration, capture_settings or header, not %q", r.Type)
}
