package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"

	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// TestMain doubles as the knowmind binary: with KNOWMIND_TEST_MAIN=1 the
// test binary runs main(), so tests start `knowmind stdio` as a real
// subprocess without building it first.
func TestMain(m *testing.M) {
	if os.Getenv("KNOWMIND_TEST_MAIN") == "1" {
		main()
		os.Exit(0)
	}
	code := m.Run()
	if testDgraph.env != nil {
		testDgraph.env.Stop()
	}
	os.Exit(code)
}

// testDgraph is a harness Dgraph started for the tests that need one
// (the serve tests start their own managed ones).
var testDgraph struct {
	once sync.Once
	env  *dgraphtest.Env
	err  error
}

func sharedDgraph(t *testing.T) *dgraphtest.Env {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Dgraph")
	}
	testDgraph.once.Do(func() { testDgraph.env, testDgraph.err = dgraphtest.Start(context.Background(), nil) })
	if testDgraph.err != nil {
		t.Fatal(testDgraph.err)
	}
	return testDgraph.env
}

// childEnv is the environment of a knowmind subprocess on env's Dgraph:
// the settings a desktop client's config would not carry (they come from
// the data dir there).
// commandRunner runs knowmind commands as child processes against env's Dgraph, failing the
// test on a non-zero exit, and returns what each wrote to stderr (progress and counts).
func commandRunner(t *testing.T, env *dgraphtest.Env) func(args ...string) string {
	envVars := childEnv(t, env)
	return func(args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = envVars
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("knowmind %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stderr.String()
	}
}

func childEnv(t *testing.T, env *dgraphtest.Env) []string {
	return append(os.Environ(),
		"KNOWMIND_TEST_MAIN=1",
		"KNOWMIND_DGRAPH="+strings.Join(env.Alphas, ","),
		"KNOWMIND_DGRAPH_HTTP="+strings.Join(env.HTTP, ","),
		"KNOWMIND_DGRAPH_PASSWORD="+env.Password,
		"KNOWMIND_SECRET="+string(env.Secret),
		"KNOWMIND_DATA_DIR="+t.TempDir(),
		"KNOWMIND_LOG_LEVEL=warn",
		fmt.Sprintf("KNOWMIND_WARM_TEXT_STATS=%v", false),
	)
}
