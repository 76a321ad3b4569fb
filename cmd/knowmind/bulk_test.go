package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind import and export as an operator types them: a vault into one tenant (progress and
// counts on stderr), the same command again (resumed, nothing written), its export into a second
// tenant, whose export holds the same records.
func TestImportExportCommands(t *testing.T) {
	env := sharedDgraph(t)
	run := commandRunner(t, env)
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	for name, text := range map[string]string{
		"Kunden/Acme.md": "# Acme\n\nKunde seit 2020, siehe [[Angebot]].",
		"Angebot.md":     "Angebot für [[Acme]] über 200 Schrauben.",
		"Ideen.md":       "Verweist auf [[Nirgendwo]].",
	} {
		p := filepath.Join(vault, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	first, second := dgraphtest.TenantName(t), dgraphtest.TenantName(t)+"-copy"

	out := run("import", vault, "--tenant", first, "--batch", "2")
	for _, want := range []string{"5/5 records", "records/s", "ETA", "written 5, unchanged 0, refused 0", "1 wiki links name no note"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	if out := run("import", vault, "--tenant", first); !strings.Contains(out, "resumed after 5 records") || !strings.Contains(out, "written 0") {
		t.Errorf("the same import again:\n%s", out)
	}

	export := filepath.Join(dir, "first.jsonl")
	if out := run("export", "--tenant", first, "--out", export); !strings.Contains(out, "exported 5 records") {
		t.Errorf("export output:\n%s", out)
	}
	run("import", export, "--tenant", second)
	copyExport := filepath.Join(dir, "second.jsonl")
	run("export", "--tenant", second, "--out", copyExport)
	records := func(path string) []string {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		if !strings.Contains(lines[0], `"type":"header"`) {
			t.Fatalf("%s starts with %s", path, lines[0])
		}
		lines = lines[1:]
		slices.Sort(lines)
		return lines
	}
	if a, b := records(export), records(copyExport); !slices.Equal(a, b) || len(a) != 5 {
		t.Errorf("the copy's export differs:\n%s\nwant\n%s", strings.Join(b, "\n"), strings.Join(a, "\n"))
	}

	// A refused record does not stop the others and makes the exit status 1.
	bad := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"type":"memory","content":"fine"}`+"\n"+`{"type":"memory","content":""}`+"\n"), 0o600)
	cmd := exec.Command(os.Args[0], "import", bad, "--tenant", first)
	cmd.Env = childEnv(t, env)
	msg, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(msg), "written 1, unchanged 0, refused 1") || !strings.Contains(string(msg), "bad.jsonl:2") {
		t.Errorf("import with a bad record: %v\n%s", err, msg)
	}
}
