package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/pelletier/go-toml/v2"

	"github.com/knowmind/knowmind"
	"github.com/knowmind/knowmind/graph/dgraphtest"
	"github.com/knowmind/knowmind/handlers"
)

// Placeholders docs/clients.md uses.
const (
	docBaseURL = "http://127.0.0.1:8765"
	docToken   = "kmt_YOUR_TOKEN"
	docDataDir = "/home/you/knowmind/data"
)

// clientConfig is what a client's config snippet tells it: a URL and
// headers, or a command with arguments and environment.
type clientConfig struct {
	url     string
	headers map[string]string
	command string
	args    []string
	env     map[string]string
}

// snippet is a fenced block of docs/clients.md marked client=NAME.
type snippet struct{ client, lang, text string }

func clientSnippets(t *testing.T) []snippet {
	t.Helper()
	f, err := os.Open("../../docs/clients.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []snippet
	var cur *snippet
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```") && strings.Contains(line, "client="):
			fields := strings.Fields(strings.TrimPrefix(line, "```"))
			cur = &snippet{lang: fields[0]}
			for _, f := range fields[1:] {
				if v, ok := strings.CutPrefix(f, "client="); ok {
					cur.client = v
				}
			}
		case cur != nil && line == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	return out
}

// parseSnippet reads a snippet as its client would.
func parseSnippet(t *testing.T, s snippet, tokenEnv map[string]string) clientConfig {
	t.Helper()
	var c clientConfig
	switch s.lang {
	case "json":
		var doc map[string]map[string]struct {
			Type      string            `json:"type"`
			Command   string            `json:"command"`
			Args      []string          `json:"args"`
			Env       map[string]string `json:"env"`
			URL       string            `json:"url"`
			ServerURL string            `json:"serverUrl"`
			Headers   map[string]string `json:"headers"`
		}
		if err := json.Unmarshal([]byte(s.text), &doc); err != nil {
			t.Fatalf("%s: %v", s.client, err)
		}
		servers := doc["mcpServers"]
		if servers == nil {
			servers = doc["servers"]
		}
		e, ok := servers["knowmind"]
		if !ok {
			t.Fatalf("%s: no server named knowmind", s.client)
		}
		c = clientConfig{url: e.URL + e.ServerURL, headers: e.Headers, command: e.Command, args: e.Args, env: e.Env}
	case "toml":
		var doc struct {
			MCPServers map[string]struct {
				Command           string            `toml:"command"`
				Args              []string          `toml:"args"`
				Env               map[string]string `toml:"env"`
				URL               string            `toml:"url"`
				BearerTokenEnvVar string            `toml:"bearer_token_env_var"`
			} `toml:"mcp_servers"`
		}
		if err := toml.Unmarshal([]byte(s.text), &doc); err != nil {
			t.Fatalf("%s: %v", s.client, err)
		}
		e, ok := doc.MCPServers["knowmind"]
		if !ok {
			t.Fatalf("%s: no server named knowmind", s.client)
		}
		c = clientConfig{url: e.URL, command: e.Command, args: e.Args, env: e.Env}
		if e.BearerTokenEnvVar != "" {
			c.headers = map[string]string{"Authorization": "Bearer " + tokenEnv[e.BearerTokenEnvVar]}
		}
	case "sh":
		c = parseClaudeMCPAdd(t, shellWords(strings.TrimSpace(s.text)))
	default:
		t.Fatalf("%s: unknown snippet language %q", s.client, s.lang)
	}
	return c
}

// parseClaudeMCPAdd reads `claude mcp add [--transport T] [--header H]...
// [--env K=V]... NAME (URL | -- COMMAND ARGS...)`.
func parseClaudeMCPAdd(t *testing.T, words []string) clientConfig {
	t.Helper()
	if len(words) < 4 || words[0] != "claude" || words[1] != "mcp" || words[2] != "add" {
		t.Fatalf("not a claude mcp add command: %q", words)
	}
	c := clientConfig{headers: map[string]string{}, env: map[string]string{}}
	var positional []string
	for i := 3; i < len(words); i++ {
		switch w := words[i]; w {
		case "--transport", "-t":
			i++
		case "--header", "-H":
			i++
			k, v, _ := strings.Cut(words[i], ":")
			c.headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		case "--env", "-e":
			i++
			k, v, _ := strings.Cut(words[i], "=")
			c.env[k] = v
		case "--":
			c.command, c.args = words[i+1], words[i+2:]
			i = len(words)
		default:
			positional = append(positional, w)
		}
	}
	if len(positional) > 1 {
		c.url = positional[1]
	}
	return c
}

// shellWords splits a command line with double-quoted words.
func shellWords(s string) []string {
	var words []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for _, r := range s {
		switch {
		case r == '"':
			inQuote, inWord = !inQuote, true
		case (r == ' ' || r == '\t' || r == '\n') && !inQuote:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// TestClientConfigs runs every snippet of docs/clients.md: an HTTP one
// against a test service on the harness Dgraph, a stdio one by starting its
// command (the knowmind binary being this test binary). Each lists the
// token's tools and calls one.
func TestClientConfigs(t *testing.T) {
	env := sharedDgraph(t)
	ctx := context.Background()
	srv := httptest.NewServer(handlers.NewRouter(handlers.Deps{
		Graph: env.Client, Logger: newLogger("error"), RateLimit: 1000, RateBurst: 1000,
		Ready: func(context.Context) (bool, map[string]string) { return true, nil },
	}))
	defer srv.Close()
	token, _, err := env.Client.CreateToken(ctx, dgraphtest.TenantName(t), []knowmind.Scope{knowmind.ScopeRead, knowmind.ScopeWrite}, "clients", nil)
	if err != nil {
		t.Fatal(err)
	}
	snippets := clientSnippets(t)
	if len(snippets) < 8 {
		t.Fatalf("docs/clients.md has %d client snippets, want at least 8", len(snippets))
	}
	dataDir := t.TempDir()
	fill := func(s string) string {
		return strings.NewReplacer(docBaseURL, srv.URL, docToken, token, docDataDir, dataDir).Replace(s)
	}
	for _, s := range snippets {
		t.Run(s.client, func(t *testing.T) {
			s.text = fill(s.text)
			c := parseSnippet(t, s, map[string]string{"KNOWMIND_TOKEN": token})
			var transport mcp.Transport
			switch {
			case c.url != "":
				if !strings.HasPrefix(c.url, srv.URL+"/") {
					t.Fatalf("URL %q does not use the placeholder %s", c.url, docBaseURL)
				}
				transport = &mcp.StreamableClientTransport{Endpoint: c.url,
					HTTPClient: &http.Client{Transport: headerTransport{c.headers, http.DefaultTransport}}}
			case c.command == "knowmind":
				cmd := exec.Command(os.Args[0], c.args...)
				cmd.Env = childEnv(t, env)
				for k, v := range c.env {
					cmd.Env = append(cmd.Env, k+"="+v)
				}
				cmd.Stderr = os.Stderr
				transport = &mcp.CommandTransport{Command: cmd}
			default:
				t.Fatalf("snippet is neither a knowmind URL nor the knowmind command: %+v", c)
			}
			cctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "clients-md-" + s.client, Version: "1"}, nil).Connect(cctx, transport, nil)
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			defer cs.Close()
			tools, err := cs.ListTools(cctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "knowmind_store_memory" }) {
				t.Fatalf("%d tools, knowmind_store_memory (the token's write scope) missing", len(tools.Tools))
			}
			res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "knowmind_stats", Arguments: map[string]any{}})
			if err != nil || res.IsError {
				t.Fatalf("knowmind_stats: %v %+v", err, res)
			}
		})
	}
}
