package snapshot

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"io"
	"os"
)

// A file is a header — magic, format, block size, a random salt — and the payload (payloadHead,
// then the sections) cut into blocks of the block size, each sealed with AES-256-GCM on its own: the
// STREAM construction of online authenticated encryption. The file's key is derived from the
// caller's key and the salt (HKDF-SHA256), so no two files share one; a block's nonce is its
// number and whether it is the last, and the header is every block's associated data. So a
// block cannot be changed, moved, dropped or taken from another file, and the file cannot be
// cut short, without a block failing to open. Every block but the last holds exactly the block
// size; the last fewer bytes, possibly none. The file's size therefore tells the payload's size
// before anything is read, and the reader holds one block at a time, never the whole file.
const (
	magic         = "knowmind-index\n"
	formatVersion = 3
	saltSize      = 32
	headerSize    = len(magic) + 8 + saltSize
	saltAt        = len(magic) + 8
	blockSize     = 1 << 20 // what WriteFile writes
	minBlockSize  = 64
	maxBlockSize  = 16 << 20
	overhead      = 16 // GCM's tag per block
	keyInfo       = "knowmind index snapshot blocks"
)

// sealedSize is the size of the file holding a payload of n bytes in blocks of size.
func sealedSize(n int64, size int) int64 {
	return int64(headerSize) + n + (n/int64(size)+1)*overhead
}

func newAEAD(key, salt []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("snapshot: key of %d bytes, want 32", len(key))
	}
	fileKey, err := hkdf.Key(sha256.New, key, salt, keyInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("snapshot: key: %w", err)
	}
	block, err := aes.NewCipher(fileKey)
	if err != nil {
		return nil, fmt.Errorf("snapshot: key: %w", err)
	}
	return cipher.NewGCM(block)
}

// blockNonce is block i's nonce: its number, then 1 for the last block.
func blockNonce(nonce []byte, i uint64, last bool) []byte {
	nonce = binary.BigEndian.AppendUint64(nonce[:0], i)
	flag := uint32(0)
	if last {
		flag = 1
	}
	return binary.BigEndian.AppendUint32(nonce, flag)
}

// blockWriter seals what is written to it block by block (Close seals the last).
type blockWriter struct {
	w      io.Writer
	aead   cipher.AEAD
	header []byte
	buf    []byte // the block being filled
	out    []byte
	nonce  []byte
	n      uint64
	size   int
}

func newBlockWriter(w io.Writer, key []byte, size int) (*blockWriter, error) {
	header := make([]byte, headerSize)
	copy(header, magic)
	binary.LittleEndian.PutUint32(header[len(magic):], formatVersion)
	binary.LittleEndian.PutUint32(header[len(magic)+4:], uint32(size))
	if _, err := rand.Read(header[saltAt:]); err != nil {
		return nil, err
	}
	aead, err := newAEAD(key, header[saltAt:])
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(header); err != nil {
		return nil, err
	}
	return &blockWriter{w: w, aead: aead, header: header, buf: make([]byte, 0, size),
		out: make([]byte, 0, size+overhead), nonce: make([]byte, 0, 12), size: size}, nil
}

// Write buffers p, sealing every block filled: a full block is sealed once more follows, so
// that the last block is always short.
func (bw *blockWriter) Write(p []byte) (int, error) {
	written := len(p)
	for len(p) > 0 {
		if len(bw.buf) == bw.size {
			if err := bw.seal(false); err != nil {
				return written - len(p), err
			}
		}
		k := copy(bw.buf[len(bw.buf):bw.size], p)
		bw.buf, p = bw.buf[:len(bw.buf)+k], p[k:]
	}
	return written, nil
}

// Close seals the last block.
func (bw *blockWriter) Close() error {
	if len(bw.buf) == bw.size {
		if err := bw.seal(false); err != nil {
			return err
		}
	}
	return bw.seal(true)
}

func (bw *blockWriter) seal(last bool) error {
	bw.out = bw.aead.Seal(bw.out[:0], blockNonce(bw.nonce, bw.n, last), bw.buf, bw.header)
	bw.n++
	bw.buf = bw.buf[:0]
	_, err := bw.w.Write(bw.out)
	return err
}

// Reader reads a snapshot file's sections in order (Next, then Read), opening each block as
// its bytes are asked for: a section is authentic when read, the whole file once Next has
// returned io.EOF. It holds one block besides what its caller reads into.
type Reader struct {
	f      *os.File
	aead   cipher.AEAD
	header []byte
	nonce  []byte
	blocks uint64 // in the file
	next   uint64 // the next block to open
	size   int    // a block's payload bytes
	last   int    // the last block's
	sealed []byte
	plain  []byte
	avail  []byte // opened and not yet read
	tag    Tag
	toc    []SectionInfo
	cur    int // the section being read, -1 before the first
	left   int // its bytes not yet read
	err    error
}

// Open opens the snapshot at path, sealed with key, and reads its tag and table of sections.
// A missing file is os.ErrNotExist; one over MaxFileBytes, not of this format, or whose first
// blocks do not open with key is ErrCorrupt.
func Open(path string, key []byte) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := newReader(f, key)
	if err != nil {
		f.Close()
		return nil, err
	}
	return r, nil
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func newReader(f *os.File, key []byte) (*Reader, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	size := fi.Size()
	if size > MaxFileBytes {
		return nil, corrupt("%d bytes, over the %d a snapshot may hold", size, int64(MaxFileBytes))
	}
	header := make([]byte, headerSize)
	if size < int64(headerSize+overhead) {
		return nil, corrupt("not a snapshot file")
	}
	if _, err := io.ReadFull(f, header); err != nil {
		return nil, corrupt("header: %v", err)
	}
	if !bytes.HasPrefix(header, []byte(magic)) {
		return nil, corrupt("not a snapshot file")
	}
	if v := binary.LittleEndian.Uint32(header[len(magic):]); v != formatVersion {
		return nil, corrupt("format %d, want %d", v, formatVersion)
	}
	block := int(binary.LittleEndian.Uint32(header[len(magic)+4:]))
	if block < minBlockSize || block > maxBlockSize {
		return nil, corrupt("blocks of %d bytes", block)
	}
	aead, err := newAEAD(key, header[saltAt:])
	if err != nil {
		return nil, err
	}
	rest := size - int64(headerSize)
	full, lastSealed := rest/int64(block+overhead), rest%int64(block+overhead)
	if lastSealed < overhead {
		return nil, corrupt("cut short")
	}
	r := &Reader{f: f, aead: aead, header: header, nonce: make([]byte, 0, 12), blocks: uint64(full) + 1,
		size: block, last: int(lastSealed - overhead), sealed: make([]byte, block+overhead), cur: -1}
	payload := full*int64(block) + int64(r.last)
	if err := r.readHead(payload); err != nil {
		return nil, err
	}
	return r, nil
}

// readHead reads the tag and the table of sections, whose sizes must add up to the payload.
func (r *Reader) readHead(payload int64) error {
	var lenBuf [binary.MaxVarintLen64]byte
	n := 0
	for ; n < len(lenBuf); n++ {
		if _, err := r.readPayload(lenBuf[n : n+1]); err != nil {
			return err
		}
		if lenBuf[n] < 0x80 {
			n++
			break
		}
	}
	headLen, k := binary.Uvarint(lenBuf[:n])
	if k <= 0 || headLen > uint64(payload-int64(n)) {
		return corrupt("table of sections of %d bytes", headLen)
	}
	head := make([]byte, headLen)
	if _, err := r.readPayload(head); err != nil {
		return err
	}
	d := NewDec(head)
	r.tag = decodeTag(d)
	left := payload - int64(n) - int64(headLen)
	r.toc = make([]SectionInfo, d.Count(2))
	for i := range r.toc {
		name := d.String()
		size := d.Uvarint()
		if d.Err() != nil {
			break
		}
		if name == "" || len(name) > maxSectionName || size > uint64(left) {
			return corrupt("section %q of %d bytes", name, size)
		}
		left -= int64(size)
		r.toc[i] = SectionInfo{Name: name, Size: int(size)}
	}
	if err := d.Done(); err != nil {
		return fmt.Errorf("%w: table of sections", err)
	}
	if left != 0 {
		return corrupt("sections of %d bytes less than the file holds", left)
	}
	return nil
}

// Tag is what the snapshot covers.
func (r *Reader) Tag() Tag { return r.tag }

// Sections are the file's sections in the order Next goes through them.
func (r *Reader) Sections() []SectionInfo { return append([]SectionInfo(nil), r.toc...) }

// Next moves to the next section, passing over what is left of the current one. After the last
// it checks that the file ends there and returns io.EOF: only then is the whole file known to be
// authentic and complete.
func (r *Reader) Next() (SectionInfo, error) {
	if r.err != nil {
		return SectionInfo{}, r.err
	}
	for r.left > 0 {
		k := min(r.left, r.size)
		if _, err := r.readPayload(make([]byte, k)); err != nil {
			return SectionInfo{}, err
		}
		r.left -= k
	}
	if r.cur < len(r.toc) {
		r.cur++
	}
	if r.cur < len(r.toc) {
		r.left = r.toc[r.cur].Size
		return r.toc[r.cur], nil
	}
	// The sections end where the payload does: what is left is the empty last block.
	for r.next < r.blocks {
		out, err := r.open(nil)
		if err != nil {
			return SectionInfo{}, err
		}
		if len(out) != 0 {
			return SectionInfo{}, r.fail(corrupt("bytes after the last section"))
		}
	}
	if n, _ := r.f.Read(make([]byte, 1)); n != 0 {
		return SectionInfo{}, r.fail(corrupt("bytes after the last block"))
	}
	return SectionInfo{}, io.EOF
}

// Read reads the current section's bytes; io.EOF at its end.
func (r *Reader) Read(p []byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if r.left == 0 {
		return 0, io.EOF
	}
	p = p[:min(len(p), r.left)]
	n, err := r.readPayload(p)
	r.left -= n
	return n, err
}

// Close closes the file.
func (r *Reader) Close() error { return r.f.Close() }

func (r *Reader) fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	return r.err
}

// readPayload fills p from the blocks, opening a whole block straight into p where it fits.
func (r *Reader) readPayload(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		if len(r.avail) == 0 {
			if r.next+1 < r.blocks && len(p)-n >= r.size {
				if _, err := r.open(p[n:n]); err != nil {
					return n, err
				}
				n += r.size
				continue
			}
			if r.plain == nil {
				r.plain = make([]byte, 0, r.size)
			}
			out, err := r.open(r.plain[:0])
			if err != nil {
				return n, err
			}
			r.avail = out
		}
		k := copy(p[n:], r.avail)
		r.avail, n = r.avail[k:], n+k
	}
	return n, nil
}

// open reads and opens the next block, appending its payload to dst (which must have room for
// it: a block's payload is never moved).
func (r *Reader) open(dst []byte) ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	if r.next >= r.blocks {
		return nil, r.fail(corrupt("cut short"))
	}
	last := r.next+1 == r.blocks
	size := r.size + overhead
	if last {
		size = r.last + overhead
	}
	if _, err := io.ReadFull(r.f, r.sealed[:size]); err != nil {
		return nil, r.fail(corrupt("block %d: %v", r.next, err))
	}
	out, err := r.aead.Open(dst, blockNonce(r.nonce, r.next, last), r.sealed[:size], r.header)
	if err != nil {
		return nil, r.fail(corrupt("block %d does not open with this key", r.next))
	}
	r.next++
	return out, nil
}
