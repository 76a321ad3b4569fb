package main

import (
	"flag"
	"path/filepath"
	"testing"
)

// --index-dir defaults to data-dir/index (made absolute like every path), "none" stays the word
// that turns snapshots off, and --index-memory-mb has its default.
func TestIndexDirFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--data-dir", "/srv/km"}, "/srv/km/index"},
		{[]string{"--data-dir", "/srv/km", "--index-dir", "/fast/idx"}, "/fast/idx"},
		{[]string{"--data-dir", "/srv/km", "--index-dir", "none"}, "none"},
	} {
		cfg, _, err := parseFlags(flag.NewFlagSet("serve", flag.ContinueOnError), c.args)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.IndexDir != filepath.FromSlash(c.want) {
			t.Errorf("%v: index dir %q, want %q", c.args, cfg.IndexDir, c.want)
		}
		if cfg.IndexMemoryMB != DefaultIndexMemoryMB {
			t.Errorf("%v: index memory %d MB, want %d", c.args, cfg.IndexMemoryMB, DefaultIndexMemoryMB)
		}
	}
}
