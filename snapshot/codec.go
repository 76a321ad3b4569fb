package snapshot

import (
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"unsafe"
)

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

// Strings appends ss as one column: their count, each one's length, then all their bytes, so
// that reading them back takes one allocation for all (Dec.Strings).
func (e *Enc) Strings(ss []string) {
	e.Uvarint(uint64(len(ss)))
	for _, s := range ss {
		e.Uvarint(uint64(len(s)))
	}
	for _, s := range ss {
		e.b = append(e.b, s...)
	}
}

// Uint32s appends v with its length, each value as 4 little-endian bytes.
func (e *Enc) Uint32s(v []uint32) {
	e.Uvarint(uint64(len(v)))
	e.b = append(e.b, make([]byte, 4*len(v))...)
	out := e.b[len(e.b)-4*len(v):]
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], x)
	}
}

// Uvarints appends v with its length, each value as a Uvarint.
func (e *Enc) Uvarints(v []uint64) {
	e.Uvarint(uint64(len(v)))
	for _, x := range v {
		e.Uvarint(x)
	}
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

// String reads a String.
func (d *Dec) String() string {
	return string(d.take(d.Int(len(d.b))))
}

// Strings reads what Enc.Strings wrote. The strings share one allocation: one kept keeps the
// column's bytes.
func (d *Dec) Strings() []string {
	n := d.Count(1)
	lengths := d.b
	total := 0
	for range n {
		total += d.Int(len(d.b)) // each at most the bytes left, so the sum cannot wrap
	}
	if d.err == nil && total > len(d.b) {
		d.fail("cut short")
	}
	if d.err != nil {
		return nil
	}
	blob := string(d.take(total))
	out := make([]string, n)
	l, off := NewDec(lengths), 0
	for i := range out {
		size := int(l.Uvarint())
		out[i] = blob[off : off+size]
		off += size
	}
	return out
}

// Uint32s reads Uint32s.
func (d *Dec) Uint32s() []uint32 {
	n := d.Int(len(d.b) / 4)
	b := d.take(4 * n)
	if b == nil {
		return nil
	}
	out := make([]uint32, n)
	if littleEndian && n > 0 {
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*n), b)
		return out
	}
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}

// Uvarints reads Uvarints.
func (d *Dec) Uvarints() []uint64 {
	out := make([]uint64, d.Count(1))
	for i := range out {
		out[i] = d.Uvarint()
	}
	if d.err != nil {
		return nil
	}
	return out
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

// ReadFloat32s fills out from r, which holds them as Float32sAppend wrote them: straight into
// out's memory where the machine's layout is the file's.
func ReadFloat32s(r io.Reader, out []float32) error {
	if len(out) == 0 {
		return nil
	}
	if littleEndian {
		_, err := io.ReadFull(r, unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 4*len(out)))
		return err
	}
	b := make([]byte, 4*len(out))
	if _, err := io.ReadFull(r, b); err != nil {
		return err
	}
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return nil
}
