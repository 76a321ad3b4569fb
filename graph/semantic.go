package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/knowmind/knowmind/semvec"
)

// semCache holds the tenant's semantic model (package semvec: PPMI over the chunks' term
// co-occurrences, reduced by a randomized SVD, and every chunk's vector), a cache derived from
// the text index (textIndex.ix) and never stored: built on the first recall that asks for it,
// rebuilt in the background when the text index changed since (at most one build at a time,
// at most every semRebuildEvery), so a chunk written or removed reaches it within one build.
// Recall uses the model at hand meanwhile: a removed chunk it still proposes is dropped by the
// recall's memory filter (its memory is gone), a new one waits for the next build.
//
// A build whose link read failed (a page past its deadline on a starved alpha, twice) keeps a
// model without the links, marked partial: it serves meanwhile (better than none), and a recall
// after semLinksRetry, doubling, starts a rebuild with links although the text index did not
// change — at most semLinksRetries in a row, so a lasting outage costs a bounded number of
// reads; a build that reads its links ends the series. A snapshot records the mark, and the next
// process's first recall rebuilds a partial model (snapshot.go).
type semCache struct {
	mu       sync.Mutex
	model    *semvec.Model
	gen, chg uint64        // the text index's version the model was built from
	built    time.Time     // when the last build started
	took     time.Duration // how long the last build took
	building bool
	done     chan struct{} // closed when the running build ends
	// partial: the model was built without the links it asked for (the read failed); repairs
	// counts the rebuilds started since for that alone, the next not before repairAt.
	partial  bool
	repairs  int
	repairAt time.Time
}

// semRebuildEvery bounds how often the model is rebuilt while writes keep coming: at most every
// semRebuildEvery, and at most every semRebuildShare builds' time (so rebuilding takes at most a
// tenth of one core: at 100k chunks a build takes ~3.4 s, BenchmarkBuild100k).
var semRebuildEvery = 30 * time.Second

var semRebuildShare time.Duration = 10

// semOptions bound the model: 2048 terms of 64 dimensions (docs/recall.md).
var semOptions = semvec.Options{Vocab: 2048, Dims: 64, MinDF: 1, ContextWeight: 0.5}

// A chunk's context in the model (semvec.Doc.Near) are the chunks of the memories its memory is
// linked to by an open relation edge (at most edgeFanout per relation, semvec's MaxNear in all):
// their words co-occur with the chunk's at semOptions.ContextWeight. Measured on LoCoMo
// (docs/recall.md); search.Plan.SemanticLinks off builds a second model without.

// semMinDocs is how many chunks a tenant needs before its semantic model holds anything: below,
// the co-occurrences of a handful of texts are noise (two texts made the concept signal overrule
// the title field in TestRecallTitleField).
const semMinDocs = 20

// semEdgesTimeout bounds each page of the link read for a build; semLinksPage is how many
// linked memories one page reads (each with up to edgeFanout neighbours per relation), so an
// answer stays small whatever the tenant's size, and the read's time grows with its pages
// instead of one query passing a fixed deadline (a single query over 300k linked memories took
// longer than two minutes on a busy machine: docs/scale.md).
const semEdgesTimeout = 2 * time.Minute

var semLinksPage = 10_000

// semLinksRetry is how long a partial model (its link read failed) serves before a recall
// rebuilds it with links; each further try waits twice as long, and after semLinksRetries failed
// tries in a row the model stays partial until the text index changes (1, 2, 4, 8 minutes: a
// starved alpha gets a quarter of an hour to recover).
var semLinksRetry = time.Minute

const semLinksRetries = 4

// semLinksTestHook, when set by a test, is called before each page of the link read with the
// relation and the page's size; an error it returns is the page's.
var semLinksTestHook func(relation string, size int) error

// semBuild builds a model from the tenant's text index as it is now (and, with links, its links
// as they are now); partial: the links were asked for and could not be read, the model was
// built without them.
func (t *Tenant) semBuild(links bool) (m *semvec.Model, gen, chg uint64, partial bool) {
	var docs []semvec.Doc
	gen, chg = t.text.ix.Each(t.Name, func(ref uint64, terms []string) {
		docs = append(docs, semvec.Doc{Ref: ref, Terms: terms})
	})
	if len(docs) < semMinDocs {
		// Too few chunks for co-occurrence statistics: an empty model (no vectors, no
		// candidates), rebuilt like any other when the tenant grows.
		return semvec.Build(nil, semOptions), gen, chg, false
	}
	var linksRead time.Duration
	if links {
		readStart := time.Now()
		linked, err := t.semLinks(context.Background())
		linksRead = time.Since(readStart)
		if err != nil {
			partial = true
			t.c.log.Warn("semantic model: links not read; built without them", "tenant", t.Name, "err", err)
		}
		if len(linked) > 0 {
			at := make(map[uint64]int, len(docs))
			for i, d := range docs {
				at[d.Ref] = i
			}
			for i, d := range docs {
				for _, n := range linked[d.Ref] {
					if j, ok := at[n]; ok && j != i {
						docs[i].Near = append(docs[i].Near, j)
					}
				}
			}
		}
	}
	start := time.Now()
	m = semvec.Build(docs, semOptions)
	t.c.log.Info("semantic model built", "tenant", t.Name, "chunks", len(docs), "links", links && !partial,
		"links_read", linksRead.Round(time.Millisecond), "build", time.Since(start).Round(time.Millisecond))
	return m, gen, chg, partial
}

// semLinks reads, for every chunk of a memory with open relation edges, the chunks of the
// memories those edges lead to (outgoing; writers materialise each link's inverse), at most
// edgeFanout per relation and memory: per relation, in pages of semLinksPage memories by uid,
// each page in one read-only transaction under its own semEdgesTimeout. A page that fails (on a
// starved alpha: its deadline passed) is read once more at half the size, and the pages after it
// keep the smaller size; a retry that fails too fails the read. Each failure halves the page, so
// a read survives at most log2(semLinksPage) of them, and its queries stay bounded by the
// tenant's linked memories.
func (t *Tenant) semLinks(ctx context.Context) (map[uint64][]uint64, error) {
	rels, err := t.linkedRelations(ctx)
	if err != nil || len(rels) == 0 {
		return nil, err
	}
	out := map[uint64][]uint64{}
	size := semLinksPage
	for _, r := range rels {
		after := ""
		for {
			last, n, err := t.semLinksPageRead(ctx, r, after, size, out)
			if err != nil && size > 1 && ctx.Err() == nil {
				t.c.log.Warn("semantic model: a page of links not read; reading it again at half the size",
					"tenant", t.Name, "relation", r, "page", size, "err", err)
				size /= 2
				last, n, err = t.semLinksPageRead(ctx, r, after, size, out)
			}
			if err != nil {
				return nil, err
			}
			if n < size {
				break
			}
			after = last
		}
	}
	return out, nil
}

// semLinksPageRead reads one page of relation r's linked memories (at most size) after uid after
// into out, which a failed read leaves as it was; it returns the page's last memory uid and how
// many memories it held.
func (t *Tenant) semLinksPageRead(ctx context.Context, r, after string, size int, out map[uint64][]uint64) (string, int, error) {
	if semLinksTestHook != nil {
		if err := semLinksTestHook(r, size); err != nil {
			return "", 0, fmt.Errorf("semantic model links: %w", err)
		}
	}
	ctx, cancel := context.WithTimeout(ctx, semEdgesTimeout)
	defer cancel()
	q := fmt.Sprintf("{ r(func: has(<%s>), first: %d%s) { uid c: Memory.chunks { uid } n: <%s> @facets(%s) (first: %d) { c: Memory.chunks { uid } } } }",
		r, size, afterClause(after), r, edgeOpenFilter, edgeFanout)
	resp, err := t.dg.NewReadOnlyTxn().Query(ctx, q)
	if err != nil {
		return "", 0, fmt.Errorf("semantic model links: %w", err)
	}
	var page struct {
		R []struct {
			UID string  `json:"uid"`
			C   []dgUID `json:"c"`
			N   []struct {
				C []dgUID `json:"c"`
			} `json:"n"`
		} `json:"r"`
	}
	if err := json.Unmarshal(resp.Json, &page); err != nil {
		return "", 0, fmt.Errorf("decode semantic model links: %w", err)
	}
	for _, m := range page.R {
		var to []uint64
		for _, n := range m.N {
			for _, c := range n.C {
				if u, err := strconv.ParseUint(c.UID, 0, 64); err == nil {
					to = append(to, u)
				}
			}
		}
		for _, c := range m.C {
			if u, err := strconv.ParseUint(c.UID, 0, 64); err == nil {
				out[u] = append(out[u], to...)
			}
		}
	}
	last := ""
	if len(page.R) > 0 {
		last = page.R[len(page.R)-1].UID
	}
	return last, len(page.R), nil
}

// semModel returns the tenant's semantic model: built now when there is none (the text index
// must be loaded), else the one at hand, starting a background rebuild when the text index
// changed since it was built, or when it is partial and its next repair is due. nil when the
// tenant holds no text.
func (t *Tenant) semModel(links bool) *semvec.Model {
	s := &t.text.sem
	if !links {
		s = &t.text.semPlain
	}
	// start marks a build as running; build runs it (s.mu held on entry, released during the
	// build) and keeps its model.
	start := func() { s.building, s.done, s.built = true, make(chan struct{}), time.Now() }
	build := func() *semvec.Model {
		s.mu.Unlock()
		m, gen, chg, partial := t.semBuild(links)
		s.mu.Lock()
		repaired := s.partial && !partial
		s.model, s.gen, s.chg, s.building, s.took = m, gen, chg, false, time.Since(s.built)
		s.notePartial(t, partial)
		close(s.done)
		t.c.enforceIndexBudget(t) // the model counts against the index memory budget (budget.go)
		if repaired {
			// The snapshot may hold the partial model (writeSnapshot rewrites it for this alone).
			go t.snapshotSoon()
		}
		return m
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.model == nil {
		if s.building {
			done := s.done
			s.mu.Unlock()
			<-done
			s.mu.Lock()
			return s.model
		}
		start()
		return build()
	}
	m := s.model
	gen, chg := t.text.ix.Version(t.Name)
	stale := (gen != s.gen || chg != s.chg) && time.Since(s.built) >= max(semRebuildEvery, semRebuildShare*s.took)
	repair := s.partial && s.repairs < semLinksRetries && !time.Now().Before(s.repairAt)
	if (stale || repair) && !s.building {
		if !stale {
			s.repairs++
			t.c.log.Info("semantic model: rebuilding with the links it lacks", "tenant", t.Name,
				"try", s.repairs, "of", semLinksRetries)
		}
		start()
		go func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			build()
		}()
	}
	return m
}

// notePartial records whether the model just built lacks its links (s.mu held): a partial one
// gets its next repair after semLinksRetry·2^repairs, a whole one ends the series of repairs.
func (s *semCache) notePartial(t *Tenant, partial bool) {
	s.partial = partial
	if !partial {
		s.repairs, s.repairAt = 0, time.Time{}
		return
	}
	if s.repairs >= semLinksRetries {
		t.c.log.Warn("semantic model: partial until the tenant's text changes; its link read failed every try",
			"tenant", t.Name, "tries", s.repairs)
		return
	}
	wait := semLinksRetry << s.repairs
	s.repairAt = time.Now().Add(wait)
	t.c.log.Info("semantic model: partial; rebuilding with links later", "tenant", t.Name, "in", wait)
}
