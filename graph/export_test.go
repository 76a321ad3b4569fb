package graph

import "github.com/knowmind/knowmind/bm25"

// TextStats exposes a tenant's BM25 statistics to the external tests (loading them first).
func (t *Tenant) TextStats(lang string, terms ...string) bm25.Stats {
	return t.text.ix.Stats(t.Name, lang, terms...)
}

// TextStatsLoaded reports whether this process has loaded the tenant's statistics.
func (t *Tenant) TextStatsLoaded() bool {
	t.text.mu.Lock()
	defer t.text.mu.Unlock()
	return t.text.state == textLoaded
}
