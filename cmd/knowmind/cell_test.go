package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/cells"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// The cell directory through the commands: a second Dgraph cluster is added as cell "b", a
// tenant of the home cell (serve's own Dgraph) is moved there and back, and data-dir/cells.json
// says where it is after each step; a move left half-done (the read-only mark of a crashed
// move) is taken over and finished by the next.
func TestCellCommands(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	home, other, envVars, dataDir := twoCells(t, ctx)
	knowmindCmd := func(args ...string) (stdout, stderr string, err error) {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = envVars
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err = cmd.Run()
		return out.String(), errOut.String(), err
	}
	run := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, err := knowmindCmd(args...)
		if err != nil {
			t.Fatalf("knowmind %s: %v\n%s", strings.Join(args, " "), err, errOut)
		}
		return out, errOut
	}
	placement := func(tenant string) (cells.Placement, bool) {
		t.Helper()
		d, err := cells.ReadDirectory(filepath.Join(dataDir, cells.DirectoryFileName))
		if err != nil {
			t.Fatal(err)
		}
		p, ok := d.Tenants[tenant]
		return p, ok
	}

	tenant := dgraphtest.TenantName(t)
	ten, err := home.Client.Tenant(ctx, tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"Zahnriemen", "Nockenwelle", "Kurbelgehaeuse"} {
		if _, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Title: w, Content: "Der " + w + " wurde im Werk Ost gewechselt."}); err != nil {
			t.Fatal(err)
		}
	}

	passwordFile, secretFile := cellSecretFiles(t, other)
	if _, _, err := knowmindCmd("cell", "add", "b", "--alphas", strings.Join(other.Alphas, ","),
		"--guardian-password-file", secretFile, "--cell-secret-file", secretFile); err == nil {
		t.Fatal("a cell whose guardian password is wrong was added")
	}
	run("cell", "add", "b", "--alphas", strings.Join(other.Alphas, ","), "--alphas-http", strings.Join(other.HTTP, ","),
		"--guardian-password-file", passwordFile, "--cell-secret-file", secretFile)
	if _, _, err := knowmindCmd("cell", "add", "b", "--alphas", strings.Join(other.Alphas, ","),
		"--guardian-password-file", passwordFile, "--cell-secret-file", secretFile); err == nil {
		t.Fatal("cell b added twice")
	}
	data, err := os.ReadFile(filepath.Join(dataDir, cells.DirectoryFileName))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(data, other.Secret) || !bytes.Contains(data, []byte(`"password_file": "`+passwordFile+`"`)) {
		t.Fatalf("the directory holds a secret:\n%s", data)
	}

	// A crashed move left the tenant read-only in home: list says so, the next move finishes.
	err = cells.UpdateDirectory(filepath.Join(dataDir, cells.DirectoryFileName), func(d *cells.Directory) error {
		d.Tenants[tenant] = cells.Placement{Cell: "home", ReadOnly: true}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := run("cell", "list"); !strings.Contains(out, "tenant "+tenant+": home (read-only") || !strings.Contains(out, "cell b: "+other.Alphas[0]) {
		t.Fatalf("cell list:\n%s", out)
	}
	_, moved := run("cell", "move", "--tenant", tenant, "--to", "b")
	if !strings.Contains(moved, "moved from home to b: 3 records") {
		t.Fatalf("cell move:\n%s", moved)
	}
	if p, ok := placement(tenant); !ok || p != (cells.Placement{Cell: "b"}) {
		t.Fatalf("after the move the directory says %+v (listed %v)", p, ok)
	}
	if out, _ := run("cell", "list"); !strings.Contains(out, "tenant "+tenant+": b\n") {
		t.Fatalf("cell list after the move:\n%s", out)
	}
	// The tenant commands act where it lives: listed once (not home's kept copy), and its
	// credentials are of its namespace in b.
	if out, _ := run("tenant", "list"); strings.Count(out, tenant+"\n") != 1 {
		t.Fatalf("tenant list after the move lists the tenant %d times:\n%s", strings.Count(out, tenant+"\n"), out)
	}
	inB, err := other.Client.NamespaceCredentials(ctx, tenant)
	if err != nil {
		t.Fatal(err)
	}
	if out, _ := run("tenant", "credentials", "--tenant", tenant); !strings.Contains(out, fmt.Sprintf("namespace: %d\n", inB.Namespace)) {
		t.Fatalf("tenant credentials after the move, want namespace %d of cell b:\n%s", inB.Namespace, out)
	}
	there, err := other.Client.Tenant(ctx, tenant, false)
	if err != nil {
		t.Fatal(err)
	}
	res, err := there.Recall(ctx, knowmind.RecallQuery{Query: "Nockenwelle gewechselt", K: 3})
	if err != nil || len(res.Hits) == 0 || !strings.Contains(res.Hits[0].Title, "Nockenwelle") {
		t.Fatalf("recall in cell b: %+v %v", res.Hits, err)
	}
	if _, errOut, err := knowmindCmd("cell", "move", "--tenant", tenant, "--to", "b"); err == nil || !strings.Contains(errOut, "already") {
		t.Fatalf("a move to the cell the tenant is in: %v\n%s", err, errOut)
	}
	if _, errOut, err := knowmindCmd("cell", "move", "--tenant", tenant, "--to", "c"); err == nil || !strings.Contains(errOut, `no cell "c"`) {
		t.Fatalf("a move to no cell: %v\n%s", err, errOut)
	}

	// Back home, dropping the copy in b: the directory lists it no more (home is where unlisted
	// tenants are), home holds its three memories once (the copy the first move kept there is
	// replaced, not imported over), and b holds it no more.
	if _, errOut, err := knowmindCmd("cell", "drop", "--tenant", tenant, "--from", "b"); err == nil || !strings.Contains(errOut, "not a copy") {
		t.Fatalf("cell drop of the cell the tenant lives in: %v\n%s", err, errOut)
	}
	_, back := run("cell", "move", "--tenant", tenant, "--to", "home", "--drop-source")
	if !strings.Contains(back, "moved from b to home: 3 records") || !strings.Contains(back, "source namespace in b is dropped") {
		t.Fatalf("cell move home --drop-source:\n%s", back)
	}
	if p, ok := placement(tenant); ok {
		t.Fatalf("after the move home the directory still lists %+v", p)
	}
	for cell, want := range map[*dgraphtest.Env]int64{home: 3, other: -1} {
		cell.Client.Forget(tenant) // this process's session is of the namespace before the moves
		ten, err := cell.Client.Tenant(ctx, tenant, false)
		if want < 0 {
			if knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
				t.Errorf("the tenant in b after --drop-source: %v, want not found", err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if st, err := ten.Stats(ctx); err != nil || st.Memories != want {
			t.Errorf("the tenant at home after a → b → a: %+v %v, want %d memories", st, err, want)
		}
	}
	if out, _ := run("cell", "list"); strings.Contains(out, tenant) {
		t.Fatalf("cell list after the move home:\n%s", out)
	}
}

// twoCells starts a second Dgraph cluster beside serve's shared one and returns both, the
// environment of a knowmind child process on the home cell and its data dir (where
// cells.json lives).
func twoCells(t *testing.T, ctx context.Context) (home, other *dgraphtest.Env, envVars []string, dataDir string) {
	t.Helper()
	home = sharedDgraph(t)
	other, err := dgraphtest.Start(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	envVars = childEnv(t, home)
	for _, v := range envVars {
		if d, ok := strings.CutPrefix(v, "KNOWMIND_DATA_DIR="); ok {
			dataDir = d
		}
	}
	return home, other, envVars, dataDir
}

// cellSecretFiles writes the cluster's guardian password and secret to private files, as an
// operator hands them to `knowmind cell add`.
func cellSecretFiles(t *testing.T, c *dgraphtest.Env) (passwordFile, secretFile string) {
	t.Helper()
	dir := t.TempDir()
	passwordFile, secretFile = filepath.Join(dir, "password"), filepath.Join(dir, "secret")
	if err := os.WriteFile(passwordFile, []byte(c.Password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretFile, c.Secret, 0o600); err != nil {
		t.Fatal(err)
	}
	return passwordFile, secretFile
}
