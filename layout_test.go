package knowmind

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestOnlyGraphImportsDgo: graph (with its subpackages: dgraphtest, dql) is the only code that
// speaks to Dgraph; the benchmark, the docs tests and everything else go through it. The check
// reads the import lines of every Go file of this module, tests included.
func TestOnlyGraphImportsDgo(t *testing.T) {
	const dgo = "github.com/dgraph-io/dgo"
	checked := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == "." {
				return nil
			}
			name := d.Name()
			if path == "graph" || name == "node_modules" || name == "testdata" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
				return filepath.SkipDir // another module (deploy/dgraph builds Dgraph itself)
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); strings.HasPrefix(p, dgo) {
				t.Errorf("%s imports %s: outside package graph, Dgraph is reached through graph (tests: graph/dgraphtest, raw DQL: graph/dql)", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked %d Go files; the walk missed the tree", checked)
	}
}
