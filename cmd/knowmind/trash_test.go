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

// knowmind trash as a person types it: a note an agent moved to the trash is listed, restored
// (visible to the agent again, provenance naming the command), restoring it twice is refused,
// emptying needs --yes and then deletes the trashed note for good.
func TestTrashCommands(t *testing.T) {
	env := sharedDgraph(t)
	ctx := context.Background()
	tenant := dgraphtest.TenantName(t)
	ten, err := env.Client.Tenant(ctx, tenant, true)
	if err != nil {
		t.Fatal(err)
	}
	scope := knowmind.NoteScope{Principal: "tok:agent"}
	agent := knowmind.Actor{Principal: "tok:agent", Via: "knowmind_delete_note"}
	create := func(body string) knowmind.NoteWriteResult {
		t.Helper()
		n, err := ten.CreateNote(ctx, scope, knowmind.CreateNoteInput{Project: "main", Path: "Kunden", Body: body,
			Class: knowmind.ClassUserDoc, Actor: agent})
		if err != nil {
			t.Fatal(err)
		}
		if err := ten.TrashNote(ctx, scope, n.ID, n.VersionToken, agent); err != nil {
			t.Fatal(err)
		}
		return n
	}
	kept := create("# Kundenakte Müller\n\nZahnräder aus Detmold.")
	gone := create("# Altlast\n\nVeraltet.")

	envVars := childEnv(t, env)
	run := func(wantOK bool, args ...string) (stdout, stderr string) {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"trash"}, args...)...)
		cmd.Env = envVars
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		if (err == nil) != wantOK {
			t.Fatalf("knowmind trash %s: err %v (want ok: %v)\n%s%s", strings.Join(args, " "), err, wantOK, out.String(), errOut.String())
		}
		return out.String(), errOut.String()
	}

	list, _ := run(true, "list", "--tenant", tenant)
	for _, want := range []string{"ID", "TRASHED", kept.ID, gone.ID, "Kundenakte Müller", "Kunden"} {
		if !strings.Contains(list, want) {
			t.Fatalf("trash list lacks %q:\n%s", want, list)
		}
	}
	if _, err := ten.GetNote(ctx, scope, kept.ID, "", false); knowmind.ErrorCode(err) != knowmind.ENOTFOUND {
		t.Fatalf("a trashed note is readable: %v", err)
	}

	if _, stderr := run(true, "restore", "--tenant", tenant, kept.ID); !strings.Contains(stderr, "note "+kept.ID+" restored") {
		t.Fatalf("restore said %q", stderr)
	}
	n, err := ten.GetNote(ctx, scope, kept.ID, "", false)
	if err != nil || n.Title != "Kundenakte Müller" || n.Path != "Kunden" || n.Provenance.UpdatedVia != "knowmind trash restore" ||
		n.Provenance.ActorKind != "human" || n.VersionToken == kept.VersionToken {
		t.Fatalf("restored note = %+v, %v", n, err)
	}
	if list, _ := run(true, "list", "--tenant", tenant); strings.Contains(list, kept.ID) || !strings.Contains(list, gone.ID) {
		t.Fatalf("trash list after the restore:\n%s", list)
	}

	// Refusals: restoring what is not in the trash, no id, emptying without --yes.
	if _, stderr := run(false, "restore", "--tenant", tenant, kept.ID); !strings.Contains(stderr, "in the trash") {
		t.Fatalf("second restore said %q", stderr)
	}
	if _, stderr := run(false, "restore", "--tenant", tenant); !strings.Contains(stderr, "note id") {
		t.Fatalf("restore without id said %q", stderr)
	}
	if _, stderr := run(false, "empty", "--tenant", tenant); !strings.Contains(stderr, "--yes") {
		t.Fatalf("empty without --yes said %q", stderr)
	}
	if _, stderr := run(false, "list"); !strings.Contains(stderr, "--tenant") {
		t.Fatalf("list without tenant said %q", stderr)
	}

	if _, stderr := run(true, "empty", "--tenant", tenant, "--yes"); !strings.Contains(stderr, "1 notes deleted for good") {
		t.Fatalf("empty said %q", stderr)
	}
	if list, _ := run(true, "list", "--tenant", tenant); strings.Contains(list, gone.ID) {
		t.Fatalf("trash list after empty:\n%s", list)
	}
	if _, err := ten.GetNote(ctx, scope, kept.ID, "", false); err != nil {
		t.Fatalf("emptying the trash touched a restored note: %v", err)
	}
}
