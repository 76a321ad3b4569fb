package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/dgraph-io/dgo/v240/protos/api"
	"google.golang.org/grpc"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/schema"
)

// The write guard: one check under every mutation this process sends, whatever tool or
// command built it. Dgraph (Badger) refuses a key over 65,000 bytes, but only when the alpha
// applies a committed transaction: it panics, and the committed entry in its write-ahead log
// is applied again on every restart, so one value too long for an index crash-loops the alpha
// for every tenant (docs/dgraph-notes.md, "Index keys over 65,000 bytes"). The tools bound
// their parameters at the edge and chunk/ cuts every run of text; this guard refuses,
// before anything is sent, a mutation holding any value whose index keys could pass the
// limit, so a bound forgotten by a future tool costs an error, not the store.
//
// The bound follows Dgraph's key layout and tokenizers (dgraph tok/, x/keys.go, v25.2.0):
//   - an index key is 1 type byte + 8 namespace bytes + 2 length bytes + the predicate +
//     1 index byte + 1 tokenizer byte + the token (+ 8 bytes for a split posting list, + a
//     language prefix for a language-collated exact index);
//   - exact indexes the whole value; hash a 32-byte digest; trigram 3-byte pieces;
//   - term and fulltext split at Unicode word boundaries (UAX #29, which always breaks at
//     white space), then lowercase and NFKC-normalise each word. That can grow a word up to
//     elevenfold in bytes (U+FDFA becomes 33 bytes from 3), plus the stream-safe joiners NFKC
//     inserts into long runs of combining marks: tokenGrowth 12 covers both. A word lies
//     within one run of non-space characters, so the longest such run bounds every token.
//     (A term index on a value tagged zh, ja, th, … splits at ASCII spaces only; the whole
//     value bounds it there.)
const (
	// maxIndexKey is the largest index key the guard lets through: Badger's 65,000 less a
	// margin for anything in the key layout above that a later Dgraph adds.
	maxIndexKey = 60_000
	// indexKeyOverhead is every byte of an index key but the predicate and the token.
	indexKeyOverhead = 1 + 8 + 2 + 1 + 1 + 8 + 16
	tokenGrowth      = 12
)

// indexKinds says how a string predicate's values become index keys.
type indexKinds struct {
	whole bool // exact: the whole value is a token
	words bool // term, fulltext: every word is a token
}

// indexedPredicates maps every string predicate with a token-making index in the tenant and
// galaxy schemas to its kinds, read from the schema files themselves so a new index is
// guarded the day it is declared.
var indexedPredicates = parseIndexedPredicates(schema.Tenant + "\n" + schema.Galaxy)

var schemaLine = regexp.MustCompile(`^<([^>]+)>\s*:\s*\[?\s*string\s*\]?\s*(.*)$`)

func parseIndexedPredicates(dql string) map[string]indexKinds {
	out := map[string]indexKinds{}
	for _, line := range strings.Split(dql, "\n") {
		m := schemaLine.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		_, rest, ok := strings.Cut(m[2], "@index(")
		if !ok {
			continue
		}
		rest, _, _ = strings.Cut(rest, ")")
		var k indexKinds
		for _, tok := range strings.Split(rest, ",") {
			switch strings.TrimSpace(tok) {
			case "exact":
				k.whole = true
			case "term", "fulltext":
				k.words = true
			}
		}
		if k.whole || k.words {
			out[m[1]] = k
		}
	}
	return out
}

// cjkTermLangs are the languages whose term tokenizer splits at ASCII spaces only.
var cjkTermLangs = map[string]bool{"zh": true, "ja": true, "th": true, "lo": true, "my": true, "bo": true, "km": true, "kxm": true}

// checkIndexedValue refuses a value of pred (lang: its language tag, "" for none) whose
// index keys could pass maxIndexKey.
func checkIndexedValue(pred, lang, value string) error {
	k, ok := indexedPredicates[pred]
	if !ok {
		return nil
	}
	room := maxIndexKey - indexKeyOverhead - len(pred) - len(lang)
	if k.whole {
		limit := room
		if lang != "" {
			limit = room / tokenGrowth // a collation key instead of the value
		}
		if len(value) > limit {
			return tooLongToIndex(pred, fmt.Sprintf("%d bytes, at most %d", len(value), limit))
		}
	}
	if k.words {
		run := longestRun(value)
		if lang != "" && cjkTermLangs[strings.SplitN(lang, "-", 2)[0]] {
			run = len(value)
		}
		if limit := room / tokenGrowth; run > limit {
			return tooLongToIndex(pred, fmt.Sprintf("a word of %d bytes, at most %d", run, limit))
		}
	}
	return nil
}

func tooLongToIndex(pred, detail string) error {
	return &knowmind.Error{Code: knowmind.EINVALID, Param: guardParam(pred),
		Message: fmt.Sprintf("%s is too long to index (%s); nothing was written", guardParam(pred), detail)}
}

// guardParam names a predicate as a client knows it: "Memory.title" is the parameter title.
func guardParam(pred string) string {
	_, field, ok := strings.Cut(pred, ".")
	if !ok {
		return pred
	}
	return field
}

// longestRun is the length in bytes of the longest run of non-space characters (invalid
// UTF-8 counted as the 3-byte U+FFFD Dgraph's tokenizer sees).
func longestRun(s string) int {
	best, cur := 0, 0
	for _, r := range s {
		if unicode.IsSpace(r) {
			cur = 0
			continue
		}
		cur += utf8.RuneLen(r)
		best = max(best, cur)
	}
	return best
}

// guardWrites is the dial option that puts the guard under every request sent on a connection.
func guardWrites() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any,
		cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if r, ok := req.(*api.Request); ok && len(r.Mutations) > 0 {
			if err := checkMutations(r.Mutations); err != nil {
				return err
			}
		}
		return invoker(ctx, method, req, reply, cc, opts...)
	})
}

// checkMutations checks every value a request sets or deletes (a deletion writes to the
// index keys of its value too).
func checkMutations(muts []*api.Mutation) error {
	for _, m := range muts {
		for _, js := range [][]byte{m.SetJson, m.DeleteJson} {
			if err := checkJSONMutation(js); err != nil {
				return err
			}
		}
		for _, nq := range [][]byte{m.SetNquads, m.DelNquads} {
			if err := checkNQuads(nq); err != nil {
				return err
			}
		}
		for _, set := range [][]*api.NQuad{m.Set, m.Del} {
			for _, q := range set {
				if v := q.GetObjectValue(); v != nil {
					if s, ok := v.Val.(*api.Value_StrVal); ok {
						if err := checkIndexedValue(q.Predicate, q.Lang, s.StrVal); err != nil {
							return err
						}
					}
					if s, ok := v.Val.(*api.Value_DefaultVal); ok {
						if err := checkIndexedValue(q.Predicate, q.Lang, s.DefaultVal); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	return nil
}

// checkJSONMutation walks a JSON mutation: objects whose keys are predicates ("Pred",
// "Pred@lang"; "Pred|facet" is a facet, never indexed), values strings, lists or nested nodes.
func checkJSONMutation(js []byte) error {
	if len(bytes.TrimSpace(js)) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(js, &v); err != nil {
		return fmt.Errorf("write guard: read JSON mutation: %w", err)
	}
	return walkJSON(v)
}

func walkJSON(v any) error {
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			if err := walkJSON(e); err != nil {
				return err
			}
		}
	case map[string]any:
		for key, val := range v {
			if strings.Contains(key, "|") {
				continue
			}
			pred, lang, _ := strings.Cut(key, "@")
			if err := checkJSONValue(pred, lang, val); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkJSONValue(pred, lang string, v any) error {
	switch v := v.(type) {
	case string:
		return checkIndexedValue(pred, lang, v)
	case []any:
		for _, e := range v {
			if err := checkJSONValue(pred, lang, e); err != nil {
				return err
			}
		}
	case map[string]any:
		return walkJSON(v)
	}
	return nil
}

// checkNQuads reads RDF N-Quads statement by statement: subject, <predicate>, object
// (a quoted literal with an optional @lang or ^^<type>, or a node), optional facets, ".".
// What it cannot read is refused: Dgraph would refuse it too, and the guard must not
// let through what it did not check.
func checkNQuads(nq []byte) error {
	s := string(nq)
	i := 0
	skipSpace := func() {
		for i < len(s) {
			switch {
			case s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r':
				i++
			case s[i] == '#':
				for i < len(s) && s[i] != '\n' {
					i++
				}
			default:
				return
			}
		}
	}
	word := func() string { // up to white space
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r' {
			i++
		}
		return s[start:i]
	}
	bad := func(what string) error {
		return fmt.Errorf("write guard: N-Quads not understood at byte %d: %s", i, what)
	}
	for {
		skipSpace()
		if i >= len(s) {
			return nil
		}
		word() // subject
		skipSpace()
		pred := word()
		pred = strings.TrimSuffix(strings.TrimPrefix(pred, "<"), ">")
		skipSpace()
		if i < len(s) && s[i] == '"' {
			end := literalEnd(s, i)
			if end < 0 {
				return bad("unterminated literal")
			}
			raw := s[i:end]
			i = end
			value, err := strconv.Unquote(raw)
			if err != nil {
				value = raw[1 : len(raw)-1] // escapes left in: at least as long as the value
			}
			lang := ""
			if strings.HasPrefix(s[i:], "@") {
				i++
				lang = word()
				lang = strings.TrimSuffix(lang, ".")
				if strings.HasSuffix(s[:i], ".") {
					i-- // "@de." ends the statement
				}
			} else if strings.HasPrefix(s[i:], "^^") {
				s2 := strings.IndexByte(s[i:], '>')
				if s2 < 0 {
					return bad("unterminated type")
				}
				i += s2 + 1
			}
			if err := checkIndexedValue(pred, lang, value); err != nil {
				return err
			}
		} else {
			if obj := word(); len(obj) > 1 && strings.HasSuffix(obj, ".") {
				i-- // "<0x1>." ends the statement
			}
		}
		skipSpace()
		if i < len(s) && s[i] == '(' { // facets
			for i < len(s) && s[i] != ')' {
				if s[i] == '"' {
					end := literalEnd(s, i)
					if end < 0 {
						return bad("unterminated facet")
					}
					i = end
					continue
				}
				i++
			}
			i++
			skipSpace()
		}
		if i >= len(s) || s[i] != '.' {
			return bad("statement does not end in '.'")
		}
		i++
	}
}

// literalEnd returns the index just after the closing quote of the literal starting at s[i].
func literalEnd(s string, i int) int {
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return -1
}
