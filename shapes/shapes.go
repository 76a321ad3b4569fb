// Package shapes holds knowmind's relation shapes: SHACL-like YAML files
// that name the typed relations (FOR_CLIENT, SUPERSEDES, ...) a tenant may
// link, their inverses, the node classes allowed at either end and their
// cardinality. Load reads them, Check validates one edge against them, and
// Names/SchemaDQL turn them into Dgraph predicates.
//
// It knows nothing of Dgraph connections, HTTP or MCP: callers pass the
// classes of both nodes (see NodeClasses) and the number of existing edges,
// and write what Check allows. The file format is in README.md.
package shapes

import (
	"embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/knowmind/knowmind"
)

// Any in a source or target list allows every class.
const Any = "*"

// DefaultDomain is the domain of the shipped shape file.
const DefaultDomain = "default"

//go:embed default.yaml
var defaultFS embed.FS

// defaultFile is how errors and Relation.File name the embedded file.
const defaultFile = "shapes/default.yaml"

// Relation is one relation type, as declared or as the implicit inverse of a
// declared one. Every Relation, inverses included, is a Dgraph uid predicate.
type Relation struct {
	Name        string
	Inverse     string // the relation materialised in the other direction; Name itself when Symmetric
	Description string
	Source      []string // classes allowed at the source; ["*"] = any
	Target      []string // classes allowed at the target; ["*"] = any
	MaxCount    int      // outgoing edges of this type per source node; 0 = unbounded
	Symmetric   bool
	// Implicit: an inverse no file declares, made from its partner's inverse field.
	Implicit bool
	Domain   string
	File     string // where it was declared (for an implicit inverse: where its partner names it)
	Line     int
}

// Set is every loaded domain's relations. All domains are active together:
// relation names are global because each is one Dgraph predicate. A Set is
// immutable after Load and safe for concurrent use.
type Set struct {
	relations map[string]Relation
	names     []string
	domains   []string
	// entityTypes and categories: the union over all files, in load order.
	entityTypes []string
	categories  []string
}

// EntityTypes are the entity types the domains declare (entity_types), for
// the memory engine's entities; Categories their memory categories.
func (s *Set) EntityTypes() []string { return slices.Clone(s.entityTypes) }

// Categories are the memory categories the domains declare (categories).
func (s *Set) Categories() []string { return slices.Clone(s.categories) }

var defaultSet = sync.OnceValues(func() (*Set, error) { return Load("") })

// Default returns the embedded default domain.
func Default() (*Set, error) { return defaultSet() }

// Load reads the embedded default domain plus every *.yaml / *.yml file
// directly in dir (in name order); dir "" means the default only. A file may
// add relations or repeat one identically, never redefine one. The error
// names file:line and the problem, for every problem found.
func Load(dir string) (*Set, error) {
	data, err := defaultFS.ReadFile("default.yaml")
	if err != nil {
		return nil, fmt.Errorf("shapes: read embedded default: %w", err)
	}
	var errs []error
	var files []fileDecls
	fd, ferrs := parseFile(defaultFile, data)
	errs = append(errs, ferrs...)
	files = append(files, fd)

	if dir != "" {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("shapes: read dir: %w", err)
		}
		for _, e := range entries { // ReadDir sorts by name: load order is stable
			ext := strings.ToLower(filepath.Ext(e.Name()))
			if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
				continue
			}
			path := filepath.Join(dir, e.Name())
			data, err := os.ReadFile(path)
			if err != nil {
				return nil, fmt.Errorf("shapes: %w", err)
			}
			fd, ferrs := parseFile(path, data)
			errs = append(errs, ferrs...)
			files = append(files, fd)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	s, errs := build(files)
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

// build merges the declarations of all files and resolves inverses: a
// declared inverse must agree with its partner, an undeclared one is made
// with the partner's classes swapped and no cardinality limit.
func build(files []fileDecls) (*Set, []error) {
	var errs []error
	fail := func(file string, line int, format string, args ...any) {
		errs = append(errs, &FileError{File: file, Line: line, Problem: fmt.Sprintf(format, args...)})
	}

	declared := map[string]decl{}
	var order []string
	domains := map[string]bool{}
	for _, f := range files {
		domains[f.domain] = true
		for _, d := range f.decls {
			prev, dup := declared[d.Name]
			if !dup {
				declared[d.Name] = d
				order = append(order, d.Name)
				continue
			}
			if diff := differences(prev, d); diff != "" {
				fail(d.File, d.Line, "relation %s already defined in %s:%d (domain %s) with a different %s",
					d.Name, prev.File, prev.Line, prev.Domain, diff)
			}
		}
	}

	rels := map[string]Relation{}
	implicitFrom := map[string]decl{} // implicit inverse name -> the declaration that named it
	for _, name := range order {
		d := declared[name]
		r := d.Relation
		if d.Symmetric {
			src, tgt := r.Source, r.Target
			switch {
			case src == nil && tgt == nil:
				src, tgt = []string{Any}, []string{Any}
			case src == nil:
				src = tgt
			case tgt == nil:
				tgt = src
			}
			if !sameClasses(src, tgt) {
				fail(d.File, d.Line, "relation %s is symmetric, so source %v and target %v must be equal", name, src, tgt)
				continue
			}
			r.Source, r.Target = src, tgt
			rels[name] = r
			continue
		}

		partner, isDeclared := declared[d.Inverse]
		if !isDeclared {
			if other, taken := implicitFrom[d.Inverse]; taken {
				fail(d.File, d.inverseLine, "inverse conflict: %s and %s (%s:%d) both name %s as their inverse",
					name, other.Name, other.File, other.Line, d.Inverse)
				continue
			}
			implicitFrom[d.Inverse] = d
			r.Source, r.Target = orAny(r.Source), orAny(r.Target)
			rels[name] = r
			rels[d.Inverse] = Relation{
				Name:        d.Inverse,
				Inverse:     name,
				Description: fmt.Sprintf("Inverse of %s (materialised with every %s edge).", name, name),
				Implicit:    true,
				Source:      r.Target,
				Target:      r.Source,
				Domain:      d.Domain,
				File:        d.File,
				Line:        d.inverseLine,
			}
			continue
		}
		switch {
		case partner.Symmetric:
			fail(d.File, d.inverseLine, "inverse conflict: %s says inverse %s, but %s (%s:%d) is symmetric (its own inverse)",
				name, d.Inverse, d.Inverse, partner.File, partner.Line)
			continue
		case partner.Inverse != name:
			fail(d.File, d.inverseLine, "inverse conflict: %s says inverse %s, but %s (%s:%d) says inverse %s",
				name, d.Inverse, d.Inverse, partner.File, partner.Line, partner.Inverse)
			continue
		}
		src, ok1 := agree(r.Source, partner.Target)
		tgt, ok2 := agree(r.Target, partner.Source)
		if !ok1 || !ok2 {
			if name < partner.Name { // report the pair once
				fail(d.File, d.Line, "relation %s (source %v, target %v) and its inverse %s (%s:%d, source %v, target %v) must have swapped classes",
					name, orAny(r.Source), orAny(r.Target), partner.Name, partner.File, partner.Line, orAny(partner.Source), orAny(partner.Target))
			}
			continue
		}
		r.Source, r.Target = src, tgt
		rels[name] = r
	}
	if len(errs) > 0 {
		return nil, errs
	}

	s := &Set{relations: rels}
	for name := range rels {
		s.names = append(s.names, name)
	}
	sort.Strings(s.names)
	for d := range domains {
		s.domains = append(s.domains, d)
	}
	sort.Strings(s.domains)
	for _, f := range files {
		for _, t := range f.entityTypes {
			if !slices.Contains(s.entityTypes, t) {
				s.entityTypes = append(s.entityTypes, t)
			}
		}
		for _, c := range f.categories {
			if !slices.Contains(s.categories, c) {
				s.categories = append(s.categories, c)
			}
		}
	}
	return s, nil
}

// differences names the fields in which two declarations of one relation
// differ, "" if they agree. Descriptions may differ: they change nothing.
func differences(a, b decl) string {
	var diff []string
	if a.Inverse != b.Inverse {
		diff = append(diff, "inverse")
	}
	if a.Symmetric != b.Symmetric {
		diff = append(diff, "symmetric")
	}
	if a.MaxCount != b.MaxCount {
		diff = append(diff, "max_count")
	}
	if !sameClasses(orAny(a.Source), orAny(b.Source)) {
		diff = append(diff, "source")
	}
	if !sameClasses(orAny(a.Target), orAny(b.Target)) {
		diff = append(diff, "target")
	}
	return strings.Join(diff, ", ")
}

// agree resolves one end shared by a relation and its declared inverse: what
// either says, or "*" if neither does; false if both say different things.
func agree(a, b []string) ([]string, bool) {
	switch {
	case a == nil && b == nil:
		return []string{Any}, true
	case a == nil:
		return b, true
	case b == nil:
		return a, true
	}
	return a, sameClasses(a, b)
}

func orAny(classes []string) []string {
	if classes == nil {
		return []string{Any}
	}
	return classes
}

func sameClasses(a, b []string) bool {
	x, y := slices.Clone(a), slices.Clone(b)
	slices.Sort(x)
	slices.Sort(y)
	return slices.Equal(x, y)
}

// Relation returns the relation type called name.
func (s *Set) Relation(name string) (Relation, bool) {
	r, ok := s.relations[name]
	r.Source, r.Target = slices.Clone(r.Source), slices.Clone(r.Target)
	return r, ok
}

// Names returns every relation type, inverses included, sorted. Each is one
// Dgraph uid predicate.
func (s *Set) Names() []string { return slices.Clone(s.names) }

// Relations returns every relation type sorted by name, e.g. for docs or a
// tool that lists what may be linked.
func (s *Set) Relations() []Relation {
	out := make([]Relation, 0, len(s.names))
	for _, n := range s.names {
		r, _ := s.Relation(n)
		out = append(out, r)
	}
	return out
}

// Domains returns the names of the loaded domains, sorted.
func (s *Set) Domains() []string { return slices.Clone(s.domains) }

// ValidName checks rel_type syntax: UPPER_SNAKE_CASE, at most 64 characters,
// no reserved predicate name. It returns an EINVALID *knowmind.Error naming
// rel_type, so tools can reject malformed input before touching storage.
func ValidName(rel string) error {
	p := nameProblem(rel)
	if p == "" {
		return nil
	}
	if up := strings.ToUpper(rel); up != rel && nameProblem(up) == "" {
		return knowmind.InvalidParam("rel_type", "rel_type %q %s (did you mean %s?)", rel, p, up)
	}
	return knowmind.InvalidParam("rel_type", "rel_type %q %s", rel, p)
}

// Check validates one edge rel from a node with classes from to a node with
// classes to, where the source already has existingOutgoing edges of type rel
// to other nodes (an idempotent re-link must not count its own edge).
//
// The inverse edge is an edge too: a caller that materialises it checks it
// with Check(r.Inverse, to, from, <inverse edges already on to>). The class
// checks then pass by construction; only the inverse's max_count can fail.
//
// It returns nil, an EINVALID error for a malformed rel_type, or an
// ECONSTRAINT *knowmind.Error whose Data["constraint"] is one of rel_type,
// source_class, target_class, max_count.
func (s *Set) Check(rel string, from, to []string, existingOutgoing int) error {
	if err := ValidName(rel); err != nil {
		return err
	}
	r, ok := s.relations[rel]
	if !ok {
		return violation("rel_type", fmt.Sprintf("rel_type %s is not defined in %s (allowed: %s)", rel, s.domainPhrase(), strings.Join(s.names, ", ")),
			map[string]any{"rel_type": rel, "domains": s.Domains(), "allowed": s.Names()})
	}
	if !allows(r.Source, from) {
		fix := classFix("source", r.Source)
		return violation("source_class",
			fmt.Sprintf("source class %s not allowed for %s (allowed: %s); %s", classPhrase(from), rel, strings.Join(r.Source, ", "), fix),
			map[string]any{"rel_type": rel, "classes": slices.Clone(from), "allowed": slices.Clone(r.Source), "fix": fix})
	}
	if !allows(r.Target, to) {
		fix := classFix("target", r.Target)
		return violation("target_class",
			fmt.Sprintf("target class %s not allowed for %s (allowed: %s); %s", classPhrase(to), rel, strings.Join(r.Target, ", "), fix),
			map[string]any{"rel_type": rel, "classes": slices.Clone(to), "allowed": slices.Clone(r.Target), "fix": fix})
	}
	if r.MaxCount > 0 && existingOutgoing >= r.MaxCount {
		return violation("max_count",
			fmt.Sprintf("max_count %d exceeded for %s (the source already has %d)", r.MaxCount, rel, existingOutgoing),
			map[string]any{"rel_type": rel, "max_count": r.MaxCount, "existing": existingOutgoing})
	}
	return nil
}

// classFix tells an agent how a node gets one of the allowed classes: the
// class tags it can set when storing a memory (see NodeClasses).
func classFix(end string, allowed []string) string {
	tags := make([]string, len(allowed))
	for i, c := range allowed {
		tags[i] = classTagPrefix + c
	}
	return fmt.Sprintf("the %s memory needs one of the tags %s (set with knowmind_store_memory's tags; a node's classes are its kind, memory_type and class:<name> tags)",
		end, strings.Join(tags, ", "))
}

func violation(constraint, msg string, data map[string]any) error {
	data["constraint"] = constraint
	return &knowmind.Error{Code: knowmind.ECONSTRAINT, Message: "SHACL constraint violated: " + msg, Data: data}
}

func (s *Set) domainPhrase() string {
	if len(s.domains) == 1 {
		return "domain " + s.domains[0]
	}
	return "domains " + strings.Join(s.domains, ", ")
}

func classPhrase(classes []string) string {
	if len(classes) == 0 {
		return "(none)"
	}
	return strings.Join(classes, ", ")
}

func allows(allowed, classes []string) bool {
	if slices.Contains(allowed, Any) {
		return true
	}
	for _, c := range classes {
		if slices.Contains(allowed, c) {
			return true
		}
	}
	return false
}

// NodeClasses returns the classes of a node: its kind ("memory" or
// "document"), its memory_type (semantic, episodic, procedural, reference)
// and every tag of the form class:<name> (e.g. class:client). Classes are
// lower case; the order is kind, memory_type, then class tags as given,
// without duplicates. A relation end accepts the node when any class is
// listed there (or "*").
func NodeClasses(kind, memoryType string, tags []string) []string {
	var classes []string
	add := func(c string) {
		c = strings.ToLower(strings.TrimSpace(c))
		if c != "" && !slices.Contains(classes, c) {
			classes = append(classes, c)
		}
	}
	add(kind)
	add(memoryType)
	for _, t := range tags {
		t = strings.TrimSpace(t)
		if len(t) > len(classTagPrefix) && strings.EqualFold(t[:len(classTagPrefix)], classTagPrefix) {
			add(t[len(classTagPrefix):])
		}
	}
	return classes
}

// classTagPrefix marks a tag that gives a node a class.
const classTagPrefix = "class:"

// SchemaDQL returns the Dgraph schema of all relation predicates, one line
// per relation, sorted: `<FOR_CLIENT>: [uid] @reverse @count .`. Edge facets
// (created_at, valid_from, valid_to) need no schema line.
func (s *Set) SchemaDQL() string {
	var b strings.Builder
	for _, n := range s.names {
		fmt.Fprintf(&b, "<%s>: [uid] @reverse @count .\n", n)
	}
	return b.String()
}
