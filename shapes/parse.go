package shapes

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// FileError is one problem in a shape file. Load reports every problem it
// finds (joined with errors.Join), each naming the file and line, so a bad
// file can be fixed in one pass instead of one restart per mistake.
type FileError struct {
	File    string
	Line    int
	Problem string
}

func (e *FileError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Problem) }

var (
	relNameRE   = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$`)
	classNameRE = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	domainRE    = regexp.MustCompile(`^[a-z][a-z0-9_-]*$`)
	yamlLineRE  = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
)

// MaxNameLen bounds relation and domain names; a relation name is also a
// Dgraph predicate and shows up in every edge listing.
const MaxNameLen = 64

// nameProblem says what is wrong with a relation name, or "" if it is fine.
// Names must not collide with the predicates knowmind owns (<Type>.<field>)
// or Dgraph's own (dgraph.*); UPPER_SNAKE_CASE already excludes both, the
// explicit checks keep that true should the syntax ever be relaxed.
func nameProblem(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > MaxNameLen:
		return fmt.Sprintf("is longer than %d characters", MaxNameLen)
	case strings.Contains(name, "."), strings.HasPrefix(strings.ToLower(name), "dgraph."):
		return "collides with reserved predicate names (no '.', no dgraph. prefix)"
	case !relNameRE.MatchString(name):
		return "must be UPPER_SNAKE_CASE (A-Z, 0-9, single underscores, starting with a letter)"
	}
	return ""
}

// decl is one relation as written in a file, before inverses are resolved.
// Source/Target are nil when the file does not say, so an explicitly declared
// inverse can take them from its partner.
type decl struct {
	Relation
	inverseLine int
}

// fileDecls is what one shape file declares.
type fileDecls struct {
	file   string
	domain string
	decls  []decl
	// entityTypes and categories are the memory engine's vocabulary (knowmind_capture).
	entityTypes []string
	categories  []string
}

// parseFile reads one shape file. It walks yaml.Node rather than decoding
// into structs so that every problem carries the line it is on and unknown
// keys are errors, not silently ignored typos.
func parseFile(file string, data []byte) (fileDecls, []error) {
	fd := fileDecls{file: file}
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, &FileError{File: file, Line: line, Problem: fmt.Sprintf(format, args...)})
	}

	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			fail(1, "empty file: missing domain and relations")
		} else {
			errs = append(errs, yamlError(file, err))
		}
		return fd, errs
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		fail(extra.Line, "only one YAML document per file")
		return fd, errs
	} else if !errors.Is(err, io.EOF) {
		return fd, append(errs, yamlError(file, err))
	}

	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		fail(root.Line, "top level must be a mapping with keys domain, description, relations")
		return fd, errs
	}
	var relations *yaml.Node
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if prev, dup := seen[k.Value]; dup {
			fail(k.Line, "duplicate key %q (first at line %d)", k.Value, prev)
			continue
		}
		seen[k.Value] = k.Line
		if v.Kind == yaml.AliasNode {
			fail(v.Line, "YAML aliases are not supported")
			continue
		}
		switch k.Value {
		case "domain":
			s, ok := stringValue(v)
			switch {
			case !ok:
				fail(v.Line, "domain must be a string")
			case len(s) > MaxNameLen || !domainRE.MatchString(s):
				fail(v.Line, "domain %q must be lower case (a-z, 0-9, '_', '-'), at most %d characters", s, MaxNameLen)
			default:
				fd.domain = s
			}
		case "description":
			if v.Kind != yaml.ScalarNode {
				fail(v.Line, "description must be a string")
			}
		case "relations":
			if v.Kind != yaml.SequenceNode {
				fail(v.Line, "relations must be a list")
				continue
			}
			relations = v
		case "entity_types", "categories":
			names, problem := classList(v)
			if problem == "" && slices.Contains(names, Any) {
				problem = `must name types, not "*"`
			}
			if problem != "" {
				fail(v.Line, "%s %s", k.Value, problem)
			} else if k.Value == "entity_types" {
				fd.entityTypes = names
			} else {
				fd.categories = names
			}
		default:
			fail(k.Line, "unknown key %q (allowed: domain, description, relations, entity_types, categories)", k.Value)
		}
	}
	if _, ok := seen["domain"]; !ok {
		fail(root.Line, "missing domain")
	}
	if relations == nil {
		if _, ok := seen["relations"]; !ok {
			fail(root.Line, "missing relations")
		}
		return fd, errs
	}
	for _, item := range relations.Content {
		d, derrs := parseRelation(file, item)
		errs = append(errs, derrs...)
		if len(derrs) == 0 {
			d.Domain, d.File = fd.domain, file
			fd.decls = append(fd.decls, d)
		}
	}
	return fd, errs
}

func parseRelation(file string, n *yaml.Node) (decl, []error) {
	d := decl{}
	d.Line = n.Line
	var errs []error
	fail := func(line int, format string, args ...any) {
		errs = append(errs, &FileError{File: file, Line: line, Problem: fmt.Sprintf(format, args...)})
	}
	if n.Kind != yaml.MappingNode {
		fail(n.Line, "each relation must be a mapping (name, description, source, target, inverse, symmetric, max_count)")
		return d, errs
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if prev, dup := seen[k.Value]; dup {
			fail(k.Line, "duplicate key %q (first at line %d)", k.Value, prev)
			continue
		}
		seen[k.Value] = k.Line
		if v.Kind == yaml.AliasNode {
			fail(v.Line, "YAML aliases are not supported")
			continue
		}
		switch k.Value {
		case "name":
			s, ok := stringValue(v)
			if !ok {
				fail(v.Line, "name must be a string")
			} else if p := nameProblem(s); p != "" {
				fail(v.Line, "relation name %q %s", s, p)
			}
			d.Name = s
		case "description":
			if v.Kind != yaml.ScalarNode {
				fail(v.Line, "description must be a string")
			}
			d.Description = strings.TrimSpace(v.Value)
		case "inverse":
			s, ok := stringValue(v)
			if !ok {
				fail(v.Line, "inverse must be a string")
			} else if p := nameProblem(s); p != "" {
				fail(v.Line, "inverse name %q %s", s, p)
			}
			d.Inverse, d.inverseLine = s, v.Line
		case "symmetric":
			b, err := strconv.ParseBool(v.Value)
			if v.Kind != yaml.ScalarNode || v.Tag != "!!bool" || err != nil {
				fail(v.Line, "symmetric must be true or false")
			}
			d.Symmetric = b
		case "max_count":
			c, err := strconv.Atoi(v.Value)
			if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || c < 0 {
				fail(v.Line, "max_count must be a whole number >= 0 (0 = unbounded)")
			}
			d.MaxCount = c
		case "source", "target":
			classes, problem := classList(v)
			if problem != "" {
				fail(v.Line, "%s %s", k.Value, problem)
			}
			if k.Value == "source" {
				d.Source = classes
			} else {
				d.Target = classes
			}
		default:
			fail(k.Line, "unknown key %q (allowed: name, description, source, target, inverse, symmetric, max_count)", k.Value)
		}
	}
	if _, ok := seen["name"]; !ok {
		fail(n.Line, "relation without name")
	}
	if len(errs) > 0 {
		return d, errs
	}
	label := fmt.Sprintf("relation %s", d.Name)
	switch {
	case d.Description == "":
		fail(n.Line, "%s: missing description", label)
	case d.Symmetric && d.Inverse != "" && d.Inverse != d.Name:
		fail(d.inverseLine, "%s is symmetric (its own inverse) but names inverse %s", label, d.Inverse)
	case !d.Symmetric && d.Inverse == "":
		fail(n.Line, "%s needs an inverse (inverse: NAME) or symmetric: true", label)
	case !d.Symmetric && d.Inverse == d.Name:
		fail(d.inverseLine, "%s names itself as inverse; write symmetric: true instead", label)
	}
	if d.Symmetric {
		d.Inverse = d.Name
	}
	return d, errs
}

// stringValue accepts a scalar that YAML reads as a string (so `name: 12` or
// `name: true` are errors rather than silently stringified).
func stringValue(v *yaml.Node) (string, bool) {
	if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
		return "", false
	}
	return strings.TrimSpace(v.Value), true
}

// classList reads `[a, b]`, `- a` lists or a single scalar ("*" alone is the
// common case). It returns the classes and a problem, "" if none.
func classList(v *yaml.Node) ([]string, string) {
	var items []*yaml.Node
	switch v.Kind {
	case yaml.ScalarNode:
		items = []*yaml.Node{v}
	case yaml.SequenceNode:
		items = v.Content
	default:
		return nil, `must be a list of class names or "*"`
	}
	if len(items) == 0 {
		return nil, `must name at least one class or "*" (any)`
	}
	var classes []string
	for _, it := range items {
		s, ok := stringValue(it)
		switch {
		case !ok:
			return nil, `must be a list of class names or "*"`
		case s == Any:
		case len(s) > MaxNameLen || !classNameRE.MatchString(s):
			return nil, fmt.Sprintf("class %q must be lower case (a-z, 0-9, '_', '-'), at most %d characters", s, MaxNameLen)
		}
		if !slices.Contains(classes, s) {
			classes = append(classes, s)
		}
	}
	if len(classes) > 1 && slices.Contains(classes, Any) {
		return nil, `"*" means any class and must stand alone`
	}
	return classes, ""
}

// parserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner). yaml.v3 names the line of the construct that was left open (the
// line where an unclosed "[" or a mis-indented list starts), 0-based.
var parserProblems = map[string]bool{
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"did not find expected '-' indicator":    true,
	"did not find expected <document start>": true,
	"did not find expected <stream-start>":   true,
	"did not find expected key":              true,
	"did not find expected node content":     true,
	"found duplicate %TAG directive":         true,
	"found duplicate %YAML directive":        true,
	"found incompatible YAML document":       true,
	"found undefined tag handle":             true,
}

// yamlError turns yaml.v3's "yaml: line N: msg" into a FileError with the line.
func yamlError(file string, err error) error {
	msg := err.Error()
	if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		problem := "invalid YAML: " + m[2]
		if parserProblems[m[2]] {
			line++ // yaml.v3 reports parser (not scanner) errors with a 0-based line
			problem += " (in the list or mapping that starts on this line)"
		}
		return &FileError{File: file, Line: line, Problem: problem}
	}
	return &FileError{File: file, Line: 1, Problem: "invalid YAML: " + strings.TrimPrefix(msg, "yaml: ")}
}
