package textdoc

import "sync"

// MaxCachedTokens bounds a tenant's token cache (about 25 bytes a token: ~50 MB).
const MaxCachedTokens = 2_000_000

// TokenCache keeps the analysed tokens of chunks recall has scored. A chunk's text never
// changes (a new version or a re-upload writes new chunks), so the entries never go stale; the
// analysis (bleve tokenizer and stemmer) is most of recall's own CPU time,
// and popular chunks are scored by many queries. Oldest entries are evicted first.
type TokenCache struct {
	mu     sync.Mutex
	tokens map[string]cachedTokens
	order  []string // keys in insertion order; order[head:] are live
	head   int
	total  int
}

// cachedTokens is a chunk's analysis: its tokens and its length for BM25.
type cachedTokens struct {
	tokens []string
	length int
}

// Analyze returns analyze(lang, text) (graph's Tenant.analyzeDoc) for the chunk with this
// uid, from the cache when it can.
func (c *TokenCache) Analyze(uid, lang, text string, analyze func(lang, text string) ([]string, int)) ([]string, int) {
	c.mu.Lock()
	hit, ok := c.tokens[uid]
	c.mu.Unlock()
	if ok {
		return hit.tokens, hit.length
	}
	toks, length := analyze(lang, text)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tokens == nil {
		c.tokens = map[string]cachedTokens{}
	}
	if _, ok := c.tokens[uid]; ok || len(toks) > MaxCachedTokens/100 {
		return toks, length // raced with another query, or too long to be worth a slot
	}
	c.tokens[uid] = cachedTokens{tokens: toks, length: length}
	c.order = append(c.order, uid)
	c.total += len(toks)
	for c.total > MaxCachedTokens && c.head < len(c.order) {
		old := c.order[c.head]
		c.order[c.head] = ""
		c.head++
		c.total -= len(c.tokens[old].tokens)
		delete(c.tokens, old)
	}
	if c.head > len(c.order)/2 && c.head > 1024 {
		c.order = append([]string(nil), c.order[c.head:]...)
		c.head = 0
	}
	return toks, length
}

// Bytes estimates the token cache's memory (about 25 bytes a token).
func (c *TokenCache) Bytes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return 25*c.total + 64*len(c.tokens)
}

// Clear empties the token cache.
func (c *TokenCache) Clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tokens, c.order, c.head, c.total = nil, nil, 0, 0
}
