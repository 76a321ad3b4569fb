package localdgraph

import (
	"bytes"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// encryptedMark is the file in DataDir saying the alphas' data is encrypted
// at rest. Without it a missing key is indistinguishable from a store made
// before encryption existed, and Dgraph would only panic deep in its WAL.
const encryptedMark = "ENCRYPTED-AT-REST"

// ErrEncryptionKey is returned when an encrypted store cannot be opened: its
// key file is missing, or the key does not match the data.
var ErrEncryptionKey = errors.New("encryption key")

// PrepareEncryption decides whether the store under dataDir runs encrypted
// and returns the key file to hand to Start ("" = unencrypted):
//   - a new store: keyFile is used, created first (32 random bytes, 0600)
//     when it does not exist, and the store is marked encrypted;
//   - a store marked encrypted: keyFile must exist;
//   - a store with data but no mark predates encryption at rest and stays
//     unencrypted (legacy is true): Dgraph cannot encrypt a store in place,
//     and opening it with a key fails.
func PrepareEncryption(dataDir, keyFile string) (use string, legacy bool, err error) {
	mark := filepath.Join(dataDir, encryptedMark)
	_, markErr := os.Stat(mark)
	marked := markErr == nil
	if !marked && hasData(filepath.Join(dataDir, "alpha1", "p")) {
		return "", true, nil
	}
	key, err := os.ReadFile(keyFile)
	switch {
	case errors.Is(err, os.ErrNotExist) && marked:
		return "", false, fmt.Errorf("%w missing: the Dgraph data under %s is encrypted at rest, and its key file %s does not exist; "+
			"restore that file from your backup (without it the data cannot be read)", ErrEncryptionKey, dataDir, keyFile)
	case errors.Is(err, os.ErrNotExist):
		if key, err = newKeyFile(keyFile); err != nil {
			return "", false, err
		}
	case err != nil:
		return "", false, fmt.Errorf("read encryption key: %w", err)
	}
	if l := len(key); l != 16 && l != 32 && l != 64 {
		return "", false, fmt.Errorf("%w file %s holds %d bytes: Dgraph takes a raw AES key of 16, 32 or 64 bytes (e.g. head -c 32 /dev/urandom)", ErrEncryptionKey, keyFile, l)
	}
	if !marked {
		if err := os.MkdirAll(dataDir, 0o700); err != nil {
			return "", false, err
		}
		note := "The alphas' data below this folder is encrypted at rest with the key in " + keyFile + ".\n"
		if err := os.WriteFile(mark, []byte(note), 0o600); err != nil {
			return "", false, err
		}
	}
	return keyFile, false, nil
}

// newKeyFile writes a fresh AES-256 key, readable by the owner only.
func newKeyFile(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp := path + ".new"
	if err := os.WriteFile(tmp, key, 0o600); err != nil {
		return nil, err
	}
	return key, os.Rename(tmp, path)
}

func hasData(dir string) bool {
	entries, err := os.ReadDir(dir)
	return err == nil && len(entries) > 0
}

// keyFailures are the lines Dgraph v25.2.0 dies with when the key does not
// fit the data (raftwal and badger): turned into ErrEncryptionKey.
var keyFailures = [][]byte{
	[]byte("Logfile is encrypted but encryption key is nil"),
	[]byte("Encryption key mismatch"),
}

// startFailure explains why a child exited during start, from its log's tail.
func (c *Cluster) startFailure(p *proc) error {
	p.mu.Lock()
	start := p.logStart
	p.mu.Unlock()
	tail := logSince(p.logPath, start)
	for _, f := range keyFailures {
		if bytes.Contains(tail, f) {
			if c.cfg.EncryptionKeyFile == "" {
				return fmt.Errorf("%w missing: dgraph %s cannot open its data under %s without one (Dgraph: %q); see %s",
					ErrEncryptionKey, p.name, c.cfg.DataDir, f, p.logPath)
			}
			return fmt.Errorf("%w mismatch: the key in %s does not open the data under %s (Dgraph: %q); "+
				"was the store made with another key, or before encryption at rest? see %s",
				ErrEncryptionKey, c.cfg.EncryptionKeyFile, c.cfg.DataDir, f, p.logPath)
		}
	}
	return fmt.Errorf("dgraph %s exited during start; see %s", p.name, p.logPath)
}

// logSince reads the log from offset on (at most its last 64 KB).
func logSince(path string, offset int64) []byte {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		offset = max(offset, st.Size()-64<<10)
	}
	_, _ = f.Seek(offset, io.SeekStart)
	b, _ := io.ReadAll(f)
	return b
}
