package handlers

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/extract"
	"github.com/knowmind/knowmind/shapes"
)

// Extractors are knowmind_capture's extractors by name and the one used when
// a call names none, and the model that writes knowmind_briefing (nil: the
// extractive briefing only). The zero value offers the offline rules extractor
// and the extractive briefing.
type Extractors struct {
	ByName   map[string]knowmind.Extractor
	Default  string
	Briefing knowmind.BriefingWriter
}

// engine is the memory engine's configuration inside the service.
type engine struct {
	extractors map[string]knowmind.Extractor
	def        string
	vocab      *vocabulary
	// described are the engine tools whose description ends in the vocabulary, with
	// the description before it.
	described map[string]string
	briefing  knowmind.BriefingWriter // nil: extractive briefings only
}

func newEngine(x Extractors, v *vocabulary) engine {
	e := engine{extractors: map[string]knowmind.Extractor{}, def: x.Default, vocab: v, described: map[string]string{}, briefing: x.Briefing}
	for name, ex := range x.ByName {
		e.extractors[name] = ex
	}
	if _, ok := e.extractors["rules"]; !ok {
		e.extractors["rules"] = extract.Rules{}
	}
	if _, ok := e.extractors[e.def]; !ok {
		e.def = "rules"
	}
	return e
}

// extractor is the one named, or the default for "".
func (e engine) extractor(name string) (knowmind.Extractor, error) {
	if name == "" {
		name = e.def
	}
	ex, ok := e.extractors[name]
	if !ok {
		return nil, knowmind.InvalidParam("extractor", "extractor must be one of %s", strings.Join(e.names(), ", "))
	}
	return ex, nil
}

func (e engine) names() []string {
	var out []string
	for n := range e.extractors {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// vocabSuffix is what the engine tools' descriptions end in.
func (e engine) vocabSuffix() string {
	types, cats := e.vocab.get()
	return fmt.Sprintf(" Entity types: %s. Categories: %s.", listOrNone(types), listOrNone(cats))
}

// describeEngineTools gives the engine tools of a tools/list answer the
// current vocabulary (copies: the server's own tool records stay as registered).
func (s *service) describeEngineTools(tools []*mcp.Tool) {
	vocab := ""
	for i, mt := range tools {
		base, ok := s.engine.described[mt.Name]
		if !ok {
			continue
		}
		if vocab == "" {
			vocab = s.engine.vocabSuffix()
		}
		c := *mt
		c.Description = base + vocab
		tools[i] = &c
	}
}

// vocabulary caches the domain's entity types and categories for a while, so
// tools/list shows a changed shape file within the TTL without reading it per request.
type vocabulary struct {
	load func() ([]string, []string, error)
	ttl  time.Duration

	mu          sync.Mutex
	at          time.Time
	types, cats []string
}

// newVocabulary reads d.Vocabulary, or else the shape set the service was started with.
func newVocabulary(d Deps, set *shapes.Set) *vocabulary {
	v := &vocabulary{load: d.Vocabulary, ttl: d.VocabularyTTL}
	if v.ttl == 0 {
		v.ttl = 5 * time.Minute
	}
	if v.load == nil && set != nil {
		v.load = func() ([]string, []string, error) { return set.EntityTypes(), set.Categories(), nil }
	}
	return v
}

// get returns the vocabulary, reloading it when older than the TTL; a failed
// reload keeps the last good one.
func (v *vocabulary) get() (types, cats []string) {
	if v == nil || v.load == nil {
		return nil, nil
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.at.IsZero() || time.Since(v.at) >= v.ttl {
		if t, c, err := v.load(); err == nil || v.at.IsZero() {
			v.types, v.cats = t, c
		}
		v.at = time.Now()
	}
	return slices.Clone(v.types), slices.Clone(v.cats)
}

func listOrNone(names []string) string {
	if len(names) == 0 {
		return "none declared"
	}
	return strings.Join(slices.Clone(names), ", ")
}

// attachRecentEntities gives list_recent's items their entities (seed 001:
// every memory in every result carries entities).
func attachRecentEntities(ctx context.Context, t knowmind.Memories, items []knowmind.RecentItem) error {
	if len(items) == 0 {
		return nil
	}
	ids := make([]string, len(items))
	for i, it := range items {
		ids[i] = it.ID
	}
	refs, err := t.EntitiesOf(ctx, ids)
	if err != nil {
		return err
	}
	for i := range items {
		items[i].Entities = refs[items[i].ID]
		if items[i].Entities == nil {
			items[i].Entities = []knowmind.EntityRef{}
		} else {
			items[i].EntityType, items[i].EntityID = items[i].Entities[0].Type, items[i].Entities[0].ID
		}
	}
	return nil
}
