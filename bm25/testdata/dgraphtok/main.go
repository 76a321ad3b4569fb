// Command dgraphtok prints the tokens Dgraph v25.2.0's fulltext index makes of each input line,
// for the tags "", "en" and "de", one JSON object per line: {"lang", "text", "tokens"}. It is the
// oracle for bm25's analysis test and lives in its own module under testdata so that knowmind
// never depends on Dgraph. Regenerate the golden file with:
//
//	cd bm25/testdata/dgraphtok && go mod tidy && go run . < ../samples.txt > ../dgraph_tokens.jsonl
package main

import (
	"bufio"
	"encoding/json"
	"os"

	"github.com/dgraph-io/dgraph/v25/tok"
)

func main() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := json.NewEncoder(os.Stdout)
	for in.Scan() {
		text := in.Text()
		for _, lang := range []string{"", "en", "de"} {
			// The same call Dgraph makes for anyoftext(pred@lang, text) and for indexing text@lang.
			toks, err := tok.GetFullTextTokens([]string{text}, lang)
			if err != nil {
				panic(err)
			}
			for i := range toks {
				toks[i] = toks[i][1:] // strip the index identifier byte
			}
			if toks == nil {
				toks = []string{}
			}
			if err := out.Encode(map[string]any{"lang": lang, "text": text, "tokens": toks}); err != nil {
				panic(err)
			}
		}
	}
}
