package knowmind

import (
	"go/ast"
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

// TestGraphExportsNoDgo: package graph's exported API (functions, methods of exported types,
// exported types with their exported fields and methods, variables and constants) names no dgo
// type, so that callers outside graph never need dgo. Its subpackages that speak raw DQL
// (graph/dql) share the transaction helper through graph/internal/dgtxn.
func TestGraphExportsNoDgo(t *testing.T) {
	const dgo = "github.com/dgraph-io/dgo"
	files, err := filepath.Glob(filepath.Join("graph", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		// The names this file gives dgo's packages: dgo/v240 is "dgo", protos/api is "api".
		names := map[string]bool{}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if !strings.HasPrefix(p, dgo) {
				continue
			}
			if imp.Name != nil {
				names[imp.Name.Name] = true
				continue
			}
			parts := strings.Split(p, "/")
			name := parts[len(parts)-1]
			if strings.HasPrefix(name, "v") && len(parts) > 1 {
				if _, err := strconv.Atoi(name[1:]); err == nil {
					name = parts[len(parts)-2]
				}
			}
			names[name] = true
		}
		if len(names) == 0 {
			continue
		}
		mentions := func(n ast.Node) bool {
			found := false
			ast.Inspect(n, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if id, ok := sel.X.(*ast.Ident); ok && names[id.Name] {
						found = true
					}
				}
				return !found
			})
			return found
		}
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if !d.Name.IsExported() {
					continue
				}
				if d.Recv != nil && !exportedRecv(d.Recv.List[0].Type) {
					continue
				}
				if mentions(d.Type) {
					t.Errorf("%s: exported %s mentions dgo in its signature", path, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, spec := range d.Specs {
					switch s := spec.(type) {
					case *ast.TypeSpec:
						if s.Name.IsExported() && exportedPartMentions(s.Type, mentions) {
							t.Errorf("%s: exported type %s mentions dgo", path, s.Name.Name)
						}
					case *ast.ValueSpec:
						for _, n := range s.Names {
							if n.IsExported() && s.Type != nil && mentions(s.Type) {
								t.Errorf("%s: exported %s has a dgo type", path, n.Name)
							}
						}
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("checked %d files of package graph; the glob missed it", checked)
	}
}

// exportedRecv reports a method receiver whose type is exported (T, *T, T[P]).
func exportedRecv(e ast.Expr) bool {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}

// exportedPartMentions applies mentions to what a type declaration exports: a struct's exported
// fields (embedded ones included), an interface's methods, any other type whole.
func exportedPartMentions(e ast.Expr, mentions func(ast.Node) bool) bool {
	st, ok := e.(*ast.StructType)
	if !ok {
		return mentions(e)
	}
	for _, f := range st.Fields.List {
		if len(f.Names) == 0 {
			if mentions(f.Type) {
				return true
			}
			continue
		}
		for _, n := range f.Names {
			if n.IsExported() && mentions(f.Type) {
				return true
			}
		}
	}
	return false
}
