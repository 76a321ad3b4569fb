package graph

import (
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
type semCache struct {
	mu       sync.Mutex
	model    *semvec.Model
	gen, chg uint64    // the text index's version the model was built from
	built    time.Time     // when the last build started
	took     time.Duration // how long the last build took
	building bool
	done     chan struct{} // closed when the running build ends
}

// semRebuildEvery bounds how often the model is rebuilt while writes keep coming: at most every
// semRebuildEvery, and at most every semRebuildShare builds' time (so rebuilding takes at most a
// tenth of one core: at 100k chunks a build takes ~3.4 s, BenchmarkBuild100k).
var semRebuildEvery = 30 * time.Second

var semRebuildShare time.Duration = 10

// semOptions bound the model: 2048 terms of 64 dimensions (docs/recall.md, fifth session).
var semOptions = semvec.Options{Vocab: 2048, Dims: 64, MinDF: 1}

// semBuild builds a model from the tenant's text index as it is now.
func (t *Tenant) semBuild() (*semvec.Model, uint64, uint64) {
	var docs []semvec.Doc
	gen, chg := t.text.ix.Each(t.Name, func(ref uint64, terms []string) {
		docs = append(docs, semvec.Doc{Ref: ref, Terms: terms})
	})
	return semvec.Build(docs, semOptions), gen, chg
}

// semModel returns the tenant's semantic model: built now when there is none (the text index
// must be loaded), else the one at hand, starting a background rebuild when the text index
// changed since it was built. nil when the tenant holds no text.
func (t *Tenant) semModel() *semvec.Model {
	s := &t.text.sem
	s.mu.Lock()
	if s.model == nil {
		if s.building {
			done := s.done
			s.mu.Unlock()
			<-done
			s.mu.Lock()
			m := s.model
			s.mu.Unlock()
			return m
		}
		s.building, s.done, s.built = true, make(chan struct{}), time.Now()
		s.mu.Unlock()
		m, gen, chg := t.semBuild()
		s.mu.Lock()
		s.model, s.gen, s.chg, s.building, s.took = m, gen, chg, false, time.Since(s.built)
		close(s.done)
		s.mu.Unlock()
		return m
	}
	m := s.model
	gen, chg := t.text.ix.Version(t.Name)
	if (gen != s.gen || chg != s.chg) && !s.building && time.Since(s.built) >= max(semRebuildEvery, semRebuildShare*s.took) {
		s.building, s.done, s.built = true, make(chan struct{}), time.Now()
		go func() {
			m, gen, chg := t.semBuild()
			s.mu.Lock()
			s.model, s.gen, s.chg, s.building, s.took = m, gen, chg, false, time.Since(s.built)
			close(s.done)
			s.mu.Unlock()
		}()
	}
	s.mu.Unlock()
	return m
}
