package main

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// knowmind token create gives a new token the memory toolset unless --toolsets says otherwise
// (all: every toolset); a misspelt toolset is refused.
func TestTokenCreateToolsetsDefault(t *testing.T) {
	env := sharedDgraph(t)
	envVars := childEnv(t, env)
	tenant := dgraphtest.TenantName(t)
	create := func(wantOK bool, args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], append([]string{"token", "create", "--tenant", tenant, "--scopes", "read"}, args...)...)
		cmd.Env = envVars
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); (err == nil) != wantOK {
			t.Fatalf("token create %v: %v\n%s", args, err, stderr.String())
		}
		return stderr.String()
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ", toolsets memory,"},
		{[]string{"--toolsets", "all"}, ", all toolsets,"},
		{[]string{"--toolsets", "notes,engine"}, ", toolsets notes,engine,"},
	} {
		if out := create(true, tc.args...); !strings.Contains(out, tc.want) {
			t.Errorf("token create %v said %q, want %q", tc.args, out, tc.want)
		}
	}
	if out := create(false, "--toolsets", "notez"); !strings.Contains(out, "notez") {
		t.Errorf("an unknown toolset: %q", out)
	}
}
