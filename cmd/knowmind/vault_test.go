package main

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/bulk"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// Issue 39, vault sync, as a person at the command line runs it: an Obsidian vault is imported
// as a project's notes (front matter kept as properties), exported back as the same files in
// their normalised form (docs/notes.md, "Vault sync"), imported again without writing, then
// edited: the edited note gets a new revision with its former body kept, its links rewired
// (the dropped [[link]] closed, the new one open) and its new properties; a new file becomes a
// note; the untouched ones stay at revision 1.
func TestVaultSyncRoundTrip(t *testing.T) {
	env := sharedDgraph(t)
	run := commandRunner(t, env)
	dir := t.TempDir()
	vault := filepath.Join(dir, "vault")
	write := func(files map[string]string) {
		t.Helper()
		for name, text := range files {
			p := filepath.Join(vault, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(map[string]string{
		// Already in the normalised form: exported byte for byte.
		"Apollo.md": "---\nowner: Lisa Meyer\nstatus: active\ntags:\n  - raumfahrt\n---\n# Apollo\n\nDas Projekt hängt von [[Saturn V]] ab.\n",
		// No title line, CRLF, a byte-order mark: normalised.
		"Technik/Saturn V.md": "\ufeffDie Rakete für [[Apollo]].\r\n\r\n",
		// Front matter in another layout (flow list, unsorted keys, nested map).
		"Leute/Lisa Meyer.md": "---\nrole: Projektleitung\naliases: [Lisa, LM]\ncontact: {mail: lisa@example.org}\n---\n\n# Lisa Meyer\n\nLeitet [[Apollo]].",
		"Mond.md":             "# Mond\n\nZiel von [[Apollo]].\n",
		".obsidian/app.json":  "{}",
	})
	tenant := dgraphtest.TenantName(t)

	if out := run("import", vault, "--tenant", tenant, "--project", "main"); !strings.Contains(out, "created 4, updated 0, unchanged 0, refused 0") {
		t.Fatalf("first sync:\n%s", out)
	}
	checkExport := func(name string) {
		t.Helper()
		out := filepath.Join(dir, name)
		run("export", "--tenant", tenant, "--format", "markdown", "--out", out)
		want := normalisedVault(t, vault)
		got := readTree(t, out)
		for rel, text := range want {
			if got[rel] != text {
				t.Errorf("%s: exported\n%q\nwant (normalised)\n%q", rel, got[rel], text)
			}
		}
		for rel := range got {
			if _, ok := want[rel]; !ok {
				t.Errorf("export wrote %s, which the vault does not hold", rel)
			}
		}
	}
	checkExport("export1")
	if got, _ := os.ReadFile(filepath.Join(dir, "export1", "Apollo.md")); !strings.HasPrefix(string(got), "---\nowner: Lisa Meyer\n") {
		t.Errorf("Apollo.md, already normalised, exported as\n%s", got)
	}
	if out := run("import", vault, "--tenant", tenant, "--project", "main"); !strings.Contains(out, "created 0, updated 0, unchanged 4, refused 0") {
		t.Errorf("the same vault again:\n%s", out)
	}

	ctx := context.Background()
	ten, err := env.Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	before, err := ten.GetNote(ctx, knowmind.NoteScope{}, "[[Apollo]]", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	beforeEdit := time.Now().UTC()
	time.Sleep(20 * time.Millisecond)

	write(map[string]string{
		"Apollo.md": "---\nowner: Lisa Meyer\nstatus: done\ntags:\n  - mond\n  - raumfahrt\n---\n# Apollo\n\nDas Projekt landete auf dem [[Mond]].\n",
		"Neu.md":    "# Neu\n\nNach [[Apollo]] kam Skylab.\n",
	})
	if out := run("import", vault, "--tenant", tenant, "--project", "main"); !strings.Contains(out, "created 1, updated 1, unchanged 3, refused 0") {
		t.Errorf("the edited vault:\n%s", out)
	}
	checkExport("export2")

	apollo, err := ten.GetNote(ctx, knowmind.NoteScope{}, "[[Apollo]]", "main", true)
	if err != nil {
		t.Fatal(err)
	}
	if apollo.ID != before.ID || apollo.Revision != before.Revision+1 || apollo.Frontmatter["status"] != "done" || apollo.Frontmatter["owner"] != "Lisa Meyer" {
		t.Errorf("Apollo after the edit: id %s (was %s), revision %d (was %d), properties %v", apollo.ID, before.ID, apollo.Revision, before.Revision, apollo.Frontmatter)
	}
	if !slices.Equal(apollo.Tags, []string{"mond", "raumfahrt"}) && !slices.Equal(apollo.Tags, []string{"raumfahrt", "mond"}) {
		t.Errorf("Apollo's tags after the edit: %v", apollo.Tags)
	}
	revs, err := ten.Revisions(ctx, knowmind.NoteScope{}, apollo.ID)
	if err != nil || len(revs) != 1 || !strings.Contains(revs[0].Content, "[[Saturn V]]") {
		t.Errorf("Apollo's revisions: %+v %v, want the former body with [[Saturn V]]", revs, err)
	}
	out := map[string]bool{}
	for _, l := range apollo.Links.Out {
		out[l.Title] = true
	}
	if !out["Mond"] || out["Saturn V"] {
		t.Errorf("Apollo's links after the edit: %+v, want Mond and not Saturn V", apollo.Links.Out)
	}
	for _, title := range []string{"Mond", "Saturn V", "Lisa Meyer"} {
		n, err := ten.GetNote(ctx, knowmind.NoteScope{}, "[["+title+"]]", "main", false)
		if err != nil || n.Revision != 1 {
			t.Errorf("%s (untouched): revision %d, %v", title, n.Revision, err)
		}
	}
	lisa, err := ten.GetNote(ctx, knowmind.NoteScope{}, "[[Lisa Meyer]]", "main", false)
	if contact, _ := lisa.Frontmatter["contact"].(map[string]any); err != nil || lisa.Frontmatter["role"] != "Projektleitung" || contact["mail"] != "lisa@example.org" {
		t.Errorf("Lisa's properties: %v %v", lisa.Frontmatter, err)
	}

	// explore: the properties, today's links, and the link of before the edit.
	now, err := ten.Explore(ctx, knowmind.ExploreQuery{MemoryID: apollo.ID, Hops: 1})
	if err != nil {
		t.Fatal(err)
	}
	if now.Properties["status"] != "done" {
		t.Errorf("explore's properties: %v", now.Properties)
	}
	// The targets of Apollo's own links (the other notes link Apollo too).
	titles := func(r knowmind.ExploreResult) map[string]bool {
		byID := map[string]string{}
		for _, n := range r.Nodes {
			byID[n.ID] = n.Title
		}
		m := map[string]bool{}
		for _, e := range r.Edges {
			if e.From == apollo.ID && e.RelType == "REFERENCES" {
				m[byID[e.To]] = true
			}
		}
		return m
	}
	if got := titles(now); !got["Mond"] || got["Saturn V"] {
		t.Errorf("explore now: %v, want Mond and not Saturn V", got)
	}
	then, err := ten.Explore(ctx, knowmind.ExploreQuery{MemoryID: apollo.ID, Hops: 1, AsOf: &beforeEdit})
	if err != nil {
		t.Fatal(err)
	}
	if got := titles(then); !got["Saturn V"] || got["Mond"] {
		t.Errorf("explore as of before the edit: %v, want Saturn V and not Mond", got)
	}
}

// normalisedVault is what an export of the vault must hold: each .md file outside hidden
// folders in bulk.NormaliseNote's form.
func normalisedVault(t *testing.T, vault string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for rel, text := range readTree(t, vault) {
		if strings.HasPrefix(rel, ".") || !strings.HasSuffix(rel, ".md") {
			continue
		}
		n, err := bulk.NormaliseNote(strings.TrimSuffix(filepath.Base(rel), ".md"), text)
		if err != nil {
			t.Fatal(err)
		}
		if again, _ := bulk.NormaliseNote(strings.TrimSuffix(filepath.Base(rel), ".md"), n); again != n {
			t.Errorf("NormaliseNote is not idempotent on %s:\n%q\n%q", rel, n, again)
		}
		out[rel] = n
	}
	return out
}

func readTree(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// A sync refused before its first file — a project the tenant does not have, a path that is no
// folder — says why and nothing else: no summary of zeros, no advice to run it again.
func TestVaultSyncRefusedBeforeItStarts(t *testing.T) {
	env := sharedDgraph(t)
	tenant := dgraphtest.TenantName(t)
	if _, err := env.Client.Tenant(context.Background(), tenant, true); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "Notiz.md")
	if err := os.WriteFile(file, []byte("# Notiz\n\nText.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	envVars := childEnv(t, env)
	for _, c := range []struct{ path, project, want string }{
		{dir, "gibtsnicht", `project "gibtsnicht" not found`},
		{file, "main", "a vault sync reads a folder"},
		{filepath.Join(dir, "fehlt"), "main", "no such file or directory"},
	} {
		cmd := exec.Command(os.Args[0], "import", c.path, "--tenant", tenant, "--project", c.project)
		cmd.Env = envVars
		out, err := cmd.CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) || strings.Contains(string(out), "run the same command again") ||
			strings.Contains(string(out), "created 0") {
			t.Errorf("import %s --project %s: err %v\n%s\nwant only why (%q)", c.path, c.project, err, out, c.want)
		}
	}
}
