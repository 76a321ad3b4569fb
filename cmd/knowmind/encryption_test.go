package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/localdgraph"
)

// Issue 13 (seed 001 stores memories encrypted): the managed Dgraph encrypts
// its data at rest with a key made on first start; a memory's words appear in
// no file under the data dir. A data dir from before encryption keeps
// working unencrypted — and there the same scan finds the words, so the scan
// is able to fail. An encrypted store without its key, or with another key,
// is refused with a message naming the key file.
func TestEncryptionAtRest(t *testing.T) {
	if testing.Short() {
		t.Skip("starts managed Dgraphs")
	}
	ctx := context.Background()
	// One port offset per data dir: a managed store's alphas keep their addresses.
	open := func(dataDir string, offset int) (*backend, error) {
		return openBackend(ctx, Config{DataDir: dataDir, DgraphPortOffset: offset, DgraphUser: "groot"}, newLogger("error"), opening{embedder: true})
	}
	// store writes a memory holding a fresh marker and shuts the store down.
	store := func(t *testing.T, dataDir string, offset int) string {
		t.Helper()
		b, err := open(dataDir, offset)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Close()
		marker := "kmmarker" + hex.EncodeToString(randomBytes(8))
		tenant, err := b.client.Tenant(ctx, "enc", true)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tenant.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: "secret plan " + marker,
			Content: "The launch code word is " + marker + ", spoken twice.", Tags: []string{marker}}); err != nil {
			t.Fatal(err)
		}
		return marker
	}

	t.Run("new store", func(t *testing.T) {
		t.Parallel()
		dir, offset := t.TempDir(), freeOffset(t)
		marker := store(t, dir, offset)
		keyFile := filepath.Join(dir, "secrets", "encryption-key")
		if fi, err := os.Stat(keyFile); err != nil || fi.Mode().Perm() != 0o600 || fi.Size() != 32 {
			t.Fatalf("key file: %v %v; want 32 bytes, 0600", fi, err)
		}
		if found := filesContaining(t, dir, marker); len(found) > 0 {
			t.Fatalf("marker in plaintext under the encrypted data dir: %v", found)
		}
		// Without its key: refused before Dgraph runs, naming the file.
		if err := os.Rename(keyFile, keyFile+".bak"); err != nil {
			t.Fatal(err)
		}
		if _, err := open(dir, offset); !errors.Is(err, localdgraph.ErrEncryptionKey) || !strings.Contains(err.Error(), keyFile) {
			t.Fatalf("start without the key: %v", err)
		}
		// With another key: Dgraph refuses the data, and the message says why.
		if err := os.WriteFile(keyFile, randomBytes(32), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := open(dir, offset); !errors.Is(err, localdgraph.ErrEncryptionKey) || !strings.Contains(err.Error(), "mismatch") {
			t.Fatalf("start with another key: %v", err)
		}
	})

	// A store made before encryption at rest (by a Dgraph started without a
	// key) starts as it is, unencrypted.
	t.Run("store from before encryption", func(t *testing.T) {
		t.Parallel()
		dir, offset := t.TempDir(), freeOffset(t)
		if _, err := readOrCreateSecret(filepath.Join(dir, "secrets", "acl-secret")); err != nil {
			t.Fatal(err)
		}
		old, err := localdgraph.Start(ctx, localdgraph.Config{DataDir: filepath.Join(dir, "dgraph"), PortOffset: offset,
			ACLSecretFile: filepath.Join(dir, "secrets", "acl-secret"), GracePeriod: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		old.Stop()
		marker := store(t, dir, offset)
		if found := filesContaining(t, dir, marker); len(found) == 0 {
			t.Fatal("the unencrypted store's marker is in no file: the scan proves nothing")
		}
		if _, err := os.Stat(filepath.Join(dir, "secrets", "encryption-key")); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("a key was made for the unencrypted store: %v", err)
		}
	})
}

// filesContaining lists the files under dir holding s.
func filesContaining(t *testing.T, dir, s string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(data, []byte(s)) {
			found = append(found, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

func randomBytes(n int) []byte {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return b
}
