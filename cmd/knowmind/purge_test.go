package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind purge as a person types it: a retention longer than the history's age erases
// nothing, --dry-run counts, a run with a retention of 0 days erases the superseded version and
// the trashed note, and the current version stays; a bad age or a missing one is refused.
func TestPurgeCommand(t *testing.T) {
	env := sharedDgraph(t)
	ctx := context.Background()
	tenant := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	v1, err := ten.StoreMemory(ctx, knowmind.StoreMemoryInput{Content: "Das Büro ist in Bielefeld."})
	if err != nil {
		t.Fatal(err)
	}
	v2, err := ten.UpdateFact(ctx, knowmind.UpdateFactInput{TargetID: v1.ID, NewTitle: "Büro", NewContent: "Das Büro ist in Hamburg."})
	if err != nil {
		t.Fatal(err)
	}
	scope := knowmind.NoteScope{Principal: "tok:agent"}
	agent := knowmind.Actor{Principal: "tok:agent", Via: "knowmind_delete_note"}
	n, err := ten.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: "main", Body: "# Altlast\n\nVeraltet.",
		Class: knowmind.ClassUserDoc, Actor: agent})
	if err != nil {
		t.Fatal(err)
	}
	if err := ten.TrashNote(ctx, scope, n.ID, n.VersionToken, agent); err != nil {
		t.Fatal(err)
	}

	envVars := childEnv(t, env)
	run := func(wantOK bool, args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"purge"}, args...)...)
		cmd.Env = envVars
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if (err == nil) != wantOK {
			t.Fatalf("knowmind purge %s: err %v (want ok: %v)\n%s%s", strings.Join(args, " "), err, wantOK, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}
	row := func(out string) string {
		t.Helper()
		for _, line := range strings.Split(out, "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[0] == tenant {
				return strings.Join(f[1:4], " ")
			}
		}
		t.Fatalf("no row for %s:\n%s", tenant, out)
		return ""
	}
	exists := func(id string) bool {
		var out struct{ M []struct{ UID string } }
		dgraphtest.QueryDG(t, env.DG(t, ten), `query q($id: string) { m(func: eq(Memory.id, $id)) { uid } }`, map[string]string{"$id": id}, &out)
		return len(out.M) > 0
	}

	if out, _ := run(true, "--tenant", tenant, "--older-than", "90d"); row(out) != "0 0 0" {
		t.Fatalf("purge --older-than 90d erased something:\n%s", out)
	}
	// 106,752 days do not fit a time.Duration: wrapped, the cut-off lay in the future and the run
	// erased all history a person asked to keep for 292 years.
	if _, stderr := run(false, "--tenant", tenant, "--older-than", "106752d"); !strings.Contains(stderr, "whole days") || !exists(v1.ID) {
		t.Fatalf("purge --older-than 106752d said %q; superseded version kept: %v", stderr, exists(v1.ID))
	}
	if out, _ := run(true, "--tenant", tenant, "--older-than", "0d", "--dry-run"); row(out) != "1 0 1" || !strings.Contains(out, "WOULD ERASE") {
		t.Fatalf("dry run:\n%s", out)
	}
	if !exists(v1.ID) || !exists(n.ID) {
		t.Fatal("the dry run erased something")
	}
	if out, _ := run(true, "--tenant", tenant, "--older-than", "0d"); row(out) != "1 0 1" {
		t.Fatalf("purge:\n%s", out)
	}
	if exists(v1.ID) || exists(n.ID) || !exists(v2.NewMemoryID) {
		t.Fatalf("after the purge: superseded %v, trashed %v, current %v", exists(v1.ID), exists(n.ID), exists(v2.NewMemoryID))
	}
	if _, stderr := run(false, "--tenant", tenant); !strings.Contains(stderr, "--older-than is required") {
		t.Fatalf("purge without an age said %q", stderr)
	}
	if _, stderr := run(false, "--tenant", tenant, "--older-than", "ninety"); !strings.Contains(stderr, "whole days") {
		t.Fatalf("purge with a bad age said %q", stderr)
	}
}
