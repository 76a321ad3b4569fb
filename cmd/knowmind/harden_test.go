package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 13: an admin development token without expiry was made on any empty
// store, production included. Now only the managed Dgraph on loopback gets one.
func TestDevTokenOnlyForManagedLoopback(t *testing.T) {
	for _, tc := range []struct {
		managed bool
		addr    string
		want    bool
	}{
		{true, "127.0.0.1:8765", true},
		{true, "[::1]:8765", true},
		{true, "0.0.0.0:8765", false},
		{true, "192.0.2.10:8765", false},
		{false, "127.0.0.1:8765", false},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := devTokenAllowed(tc.managed, addr); got != tc.want {
			t.Errorf("managed %v on %s: %v, want %v", tc.managed, tc.addr, got, tc.want)
		}
	}
}

// Issue 13: --secret had no minimum length and secrets came only from flags or
// the environment (visible in ps and docker inspect).
func TestSecretsFromFilesAndMinimumLength(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	long := strings.Repeat("s", 32)
	cfg, err := parseServeFlags([]string{"--secret-file", write("secret", long+"\n"), "--dgraph-password-file", write("pw", "guardian\n")})
	if err != nil || cfg.Secret != long || cfg.DgraphPassword != "guardian" {
		t.Fatalf("from files: secret %q password %q, %v", cfg.Secret, cfg.DgraphPassword, err)
	}
	for name, args := range map[string][]string{
		"short secret":           {"--secret", "too-short"},
		"short secret from file": {"--secret-file", write("short", "abc\n")},
		"both":                   {"--secret", long, "--secret-file", write("s2", long)},
		"missing file":           {"--dgraph-password-file", filepath.Join(dir, "nope")},
		"empty file":             {"--dgraph-password-file", write("empty", "\n")},
	} {
		if _, err := parseServeFlags(args); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}
