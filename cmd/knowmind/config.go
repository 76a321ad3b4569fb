package main

import (
	"flag"
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/handlers"
)

// Config is every setting of the service, filled from flags with environment
// variables as defaults (KNOWMIND_<FLAG>, dashes as underscores).
type Config struct {
	Addr             string         // HTTP listen address
	DataDir          string         // managed Dgraph data, secrets
	Dgraph           []string       // external alphas (gRPC); empty = managed local Dgraph
	DgraphHTTP       []string       // their HTTP addresses, if not gRPC port - 1000
	DgraphUser       string         // guardian user of an external cluster
	DgraphPassword   string         // guardian password of an external cluster
	DgraphBin        string         // dgraph binary for the managed mode
	DgraphPortOffset int            // managed mode port offset
	DgraphCacheMB    int            // managed alpha cache bound
	DgraphMemLimitMB int            // managed alpha's GOMEMLIMIT
	DgraphGOGC       int            // managed alpha's GOGC (0: Go's default)
	EncryptKeyFile   string         // AES key of the managed Dgraph's encryption at rest; default data-dir/secrets/encryption-key
	Secret           string         // service secret (derives namespace passwords); default: data-dir/secrets/service-secret
	ShapesDir        string         // extra shape files
	AllowedOrigins   []string       // browser origins allowed to call the MCP endpoint
	PublicURL        string         // external base URL (for resource metadata)
	TrustedProxies   []netip.Prefix // reverse proxies whose X-Forwarded-For names the client
	Embedder         string         // hash | hugot | openai
	ModelDir         string         // hugot model folder
	EmbedURL         string         // openai-compatible base URL
	EmbedModel       string         // model name for the openai provider
	RerankerDir      string         // hugot cross-encoder folder (optional)
	JWTSecret        string         // HS256 secret for JWT bearer tokens (optional)
	JWTPublicKeys    string         // PEM file of RS256/ES256 keys (optional)
	JWTAudience      string         // required aud claim for JWTs
	JWTIssuer        string         // required iss claim for JWTs ("" = not checked)
	JWTTenantClaim   string         // claim naming the tenant
	JWTCreateTenants bool           // a JWT may create its tenant's workspace
	OAuthIssuer      string         // external authorization server whose access tokens are accepted (optional)
	OAuthAudience    []string       // aud values accepted in its tokens; default: the MCP endpoint URLs under PublicURL
	OAuthTenantClaim string         // claim naming the tenant
	OAuthTenant      string         // tenant for tokens without that claim ("" = refuse them)
	OAuthScopeMap    string         // issuer scope=knowmind scope pairs, e.g. "km:read=read,km:write=write"
	LogFormat        string         // text | json
	MetricsAddr      string         // separate listen address for /metrics ("" = none)
	MetricsToken     string         // bearer token for /metrics on the main address ("" = not served there)
	RateLimit        float64        // requests per second per token
	RateBurst        int            // burst per token
	TenantRateLimit  float64        // requests per second per tenant
	TenantRateBurst  int            // burst per tenant
	CallTimeout      time.Duration  // deadline of one tool call
	DgraphTimeout    time.Duration  // deadline of one round trip to Dgraph
	TenantInFlight   int            // tool calls one tenant may have running at once
	ShutdownTimeout  time.Duration  // graceful HTTP shutdown
	LogLevel         string
	WarmTextStats    bool          // load every tenant's BM25 statistics at startup, not on its first recall
	ExactVectors     bool          // hold every tenant's chunk vectors for recall's exact vector search
	IndexDir         string        // where tenants' derived indexes are persisted; default data-dir/index, "none" = not persisted
	IndexMemoryMB    int           // bound of the open tenants' derived indexes together; 0 = unbounded
	Extractor        string        // knowmind_capture's default extractor: rules | llm
	LLMURL           string        // OpenAI-compatible chat completions server for the llm extractor
	LLMModel         string        // its model name
	LLMTimeout       time.Duration // per request

	// DgraphPortOffsetSet: the offset was given (flag or environment); else the data dir's
	// recorded offset wins over the default.
	DgraphPortOffsetSet bool
}

func envOr(name, def string) string {
	if v, ok := os.LookupEnv("KNOWMIND_" + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))); ok {
		return v
	}
	return def
}

func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// minSecretBytes is the shortest service secret accepted.
const minSecretBytes = 32

// DefaultIndexMemoryMB is --index-memory-mb's default (graph.DefaultIndexMemoryMB).
const DefaultIndexMemoryMB = graph.DefaultIndexMemoryMB

// parseServeFlags fills Config from serve's flags and the environment.
func parseServeFlags(args []string) (Config, error) {
	cfg, pos, err := parseFlags(flag.NewFlagSet("serve", flag.ContinueOnError), args)
	if err == nil && len(pos) > 0 {
		err = fmt.Errorf("unexpected arguments: %v", pos)
	}
	return cfg, err
}

// parseFlags registers Config's flags on fs beside the command's own, parses args (flags and
// positional arguments in any order: `token revoke ID --data-dir D` and `token revoke --data-dir
// D ID` both work) and completes Config. It returns the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) (Config, []string, error) {
	var c Config
	complete := c.register(fs)
	var pos []string
	if i := slices.Index(args, "--"); i >= 0 {
		args, pos = args[:i], args[i+1:]
	}
	var before []string
	for {
		if err := fs.Parse(args); err != nil {
			return c, nil, err
		}
		if fs.NArg() == 0 {
			break
		}
		before = append(before, fs.Arg(0))
		args = fs.Args()[1:]
	}
	return c, append(before, pos...), complete()
}

// register adds every setting's flag to fs, with the environment's values as defaults, and
// returns the step that completes c after fs.Parse: lists split, secret files read, paths made
// absolute.
func (c *Config) register(fs *flag.FlagSet) (complete func() error) {
	var dgraph, dgraphHTTP, origins, oauthAudience, proxies, secretFile, passwordFile string
	fs.StringVar(&c.Addr, "addr", envOr("addr", "127.0.0.1:8765"), "HTTP listen address (env KNOWMIND_ADDR)")
	fs.StringVar(&c.DataDir, "data-dir", envOr("data-dir", "./data"), "data directory: managed Dgraph and secrets (env KNOWMIND_DATA_DIR)")
	fs.StringVar(&dgraph, "dgraph", envOr("dgraph", ""), "external Dgraph alphas host:9080[,host:9080...]; empty = start a local Dgraph (env KNOWMIND_DGRAPH)")
	fs.StringVar(&dgraphHTTP, "dgraph-http", envOr("dgraph-http", ""), "HTTP addresses of the alphas, if not gRPC port - 1000 (env KNOWMIND_DGRAPH_HTTP)")
	fs.StringVar(&c.DgraphUser, "dgraph-user", envOr("dgraph-user", "groot"), "guardian user of an external cluster (env KNOWMIND_DGRAPH_USER)")
	fs.StringVar(&c.DgraphPassword, "dgraph-password", envOr("dgraph-password", ""), "guardian password of an external cluster (env KNOWMIND_DGRAPH_PASSWORD)")
	fs.StringVar(&c.DgraphBin, "dgraph-bin", envOr("dgraph-bin", ""), "dgraph binary for the managed mode (env KNOWMIND_DGRAPH_BIN; default ./bin/dgraph)")
	fs.IntVar(&c.DgraphPortOffset, "dgraph-port-offset", atoiOr(envOr("dgraph-port-offset", ""), 100), "port offset of the managed Dgraph (zero 5180/6180, alpha 7180/8180/9180 at 100); recorded in the data dir on its first start, which later commands read when the flag is left out (env KNOWMIND_DGRAPH_PORT_OFFSET)")
	fs.IntVar(&c.DgraphCacheMB, "dgraph-cache-mb", atoiOr(envOr("dgraph-cache-mb", ""), 512), "cache bound of the managed alpha in MB")
	fs.IntVar(&c.DgraphMemLimitMB, "dgraph-mem-limit-mb", atoiOr(envOr("dgraph-mem-limit-mb", ""), 0), "soft memory limit (GOMEMLIMIT) of the managed alpha in MB; 0 = none (docs/dgraph-notes.md measures it at 100k memories)")
	fs.IntVar(&c.DgraphGOGC, "dgraph-gogc", atoiOr(envOr("dgraph-gogc", ""), 0), "GOGC of the managed alpha; 0 = Go's default (100). 50 lowered its peak at 100k memories from 2.7 to 2.3 GB at some recall latency (docs/dgraph-notes.md)")
	fs.StringVar(&c.EncryptKeyFile, "encryption-key-file", envOr("encryption-key-file", ""), "AES key (16/32/64 raw bytes) encrypting the managed Dgraph at rest; default data-dir/secrets/encryption-key, made on first start (env KNOWMIND_ENCRYPTION_KEY_FILE)")
	fs.StringVar(&c.Secret, "secret", envOr("secret", ""), "service secret, at least 32 bytes (env KNOWMIND_SECRET; default: generated in data-dir/secrets)")
	fs.StringVar(&secretFile, "secret-file", envOr("secret-file", ""), "file holding the service secret, e.g. a docker secret (env KNOWMIND_SECRET_FILE)")
	fs.StringVar(&passwordFile, "dgraph-password-file", envOr("dgraph-password-file", ""), "file holding --dgraph-password, e.g. a docker secret (env KNOWMIND_DGRAPH_PASSWORD_FILE)")
	fs.StringVar(&c.ShapesDir, "shapes-dir", envOr("shapes-dir", ""), "directory of extra relation shape files (env KNOWMIND_SHAPES_DIR)")
	fs.StringVar(&origins, "allowed-origins", envOr("allowed-origins", ""), "comma-separated browser origins allowed to call /mcp (env KNOWMIND_ALLOWED_ORIGINS)")
	fs.StringVar(&c.PublicURL, "public-url", envOr("public-url", ""), "external base URL, e.g. https://knowmind.example (env KNOWMIND_PUBLIC_URL)")
	fs.StringVar(&proxies, "trusted-proxies", envOr("trusted-proxies", ""),
		"comma-separated addresses or CIDR ranges of reverse proxies whose X-Forwarded-For names the client, for counting failed authentications per client (env KNOWMIND_TRUSTED_PROXIES)")
	fs.StringVar(&c.Embedder, "embedder", envOr("embedder", "hash"), "embedding provider: hash (built-in, offline), hugot, openai (env KNOWMIND_EMBEDDER)")
	fs.StringVar(&c.ModelDir, "model-dir", envOr("model-dir", ""), "model folder for --embedder hugot (env KNOWMIND_MODEL_DIR)")
	fs.StringVar(&c.EmbedURL, "embed-url", envOr("embed-url", ""), "base URL of an OpenAI-compatible embeddings server (env KNOWMIND_EMBED_URL)")
	fs.StringVar(&c.EmbedModel, "embed-model", envOr("embed-model", ""), "model name for --embedder openai (env KNOWMIND_EMBED_MODEL)")
	fs.StringVar(&c.RerankerDir, "reranker-dir", envOr("reranker-dir", ""), "cross-encoder model folder for reranking (env KNOWMIND_RERANKER_DIR)")
	fs.StringVar(&c.JWTSecret, "jwt-secret", envOr("jwt-secret", ""), "HS256 secret for JWT bearer tokens (env KNOWMIND_JWT_SECRET)")
	fs.StringVar(&c.JWTPublicKeys, "jwt-public-keys", envOr("jwt-public-keys", ""), "PEM file with RS256/ES256 public keys for JWTs (env KNOWMIND_JWT_PUBLIC_KEYS)")
	fs.StringVar(&c.JWTAudience, "jwt-audience", envOr("jwt-audience", "knowmind"), "required aud claim of JWTs (env KNOWMIND_JWT_AUDIENCE)")
	fs.StringVar(&c.JWTIssuer, "jwt-issuer", envOr("jwt-issuer", ""), "required iss claim of JWTs; empty = not checked (env KNOWMIND_JWT_ISSUER)")
	fs.StringVar(&c.JWTTenantClaim, "jwt-tenant-claim", envOr("jwt-tenant-claim", "tenant"), "JWT claim naming the tenant (env KNOWMIND_JWT_TENANT_CLAIM)")
	fs.BoolVar(&c.JWTCreateTenants, "jwt-create-tenants", boolOr(envOr("jwt-create-tenants", ""), false),
		"let a JWT whose tenant has no workspace create it; off, such JWTs get 403 (env KNOWMIND_JWT_CREATE_TENANTS)")
	fs.StringVar(&c.OAuthIssuer, "oauth-issuer", envOr("oauth-issuer", ""), "OAuth 2.1 authorization server (issuer URL) whose access tokens are accepted; listed in /.well-known/oauth-protected-resource (env KNOWMIND_OAUTH_ISSUER)")
	fs.StringVar(&oauthAudience, "oauth-audience", envOr("oauth-audience", ""), "comma-separated aud values accepted in the issuer's tokens; default: the MCP endpoint URLs under --public-url (env KNOWMIND_OAUTH_AUDIENCE)")
	fs.StringVar(&c.OAuthTenantClaim, "oauth-tenant-claim", envOr("oauth-tenant-claim", "tenant"), "access-token claim holding the tenant (env KNOWMIND_OAUTH_TENANT_CLAIM)")
	fs.StringVar(&c.OAuthTenant, "oauth-default-tenant", envOr("oauth-default-tenant", ""), "tenant for access tokens without the tenant claim; empty = refuse them (env KNOWMIND_OAUTH_DEFAULT_TENANT)")
	fs.StringVar(&c.OAuthScopeMap, "oauth-scope-map", envOr("oauth-scope-map", ""), "issuer scopes to knowmind scopes, e.g. knowmind:read=read,knowmind:write=write; empty = read, write, admin as they are (env KNOWMIND_OAUTH_SCOPE_MAP)")
	fs.StringVar(&c.LogFormat, "log-format", envOr("log-format", "text"), "log format: text or json (env KNOWMIND_LOG_FORMAT)")
	fs.StringVar(&c.MetricsAddr, "metrics-addr", envOr("metrics-addr", ""), "listen address for Prometheus /metrics, e.g. 127.0.0.1:9464; empty = none (env KNOWMIND_METRICS_ADDR)")
	fs.StringVar(&c.MetricsToken, "metrics-token", envOr("metrics-token", ""), "bearer token that opens /metrics on the main address; empty = /metrics not served there (env KNOWMIND_METRICS_TOKEN)")
	fs.Float64Var(&c.RateLimit, "rate-limit", atofOr(envOr("rate-limit", ""), handlers.DefaultRateLimit), "requests per second per token; more wait their turn up to 2 s, then 429 (env KNOWMIND_RATE_LIMIT)")
	fs.IntVar(&c.RateBurst, "rate-burst", atoiOr(envOr("rate-burst", ""), handlers.DefaultRateBurst), "request burst per token (env KNOWMIND_RATE_BURST)")
	fs.Float64Var(&c.TenantRateLimit, "tenant-rate-limit", atofOr(envOr("tenant-rate-limit", ""), handlers.DefaultTenantRateLimit), "requests per second of all tokens of a tenant together (env KNOWMIND_TENANT_RATE_LIMIT)")
	fs.IntVar(&c.TenantRateBurst, "tenant-rate-burst", atoiOr(envOr("tenant-rate-burst", ""), handlers.DefaultTenantRateBurst), "request burst per tenant (env KNOWMIND_TENANT_RATE_BURST)")
	fs.DurationVar(&c.CallTimeout, "call-timeout", durationOr(envOr("call-timeout", ""), handlers.DefaultCallTimeout),
		"deadline of one tool call, its Dgraph work and embedding included; negative = none (env KNOWMIND_CALL_TIMEOUT)")
	fs.DurationVar(&c.DgraphTimeout, "dgraph-timeout", durationOr(envOr("dgraph-timeout", ""), graph.DefaultRPCTimeout),
		"deadline of one query, mutation or commit sent to Dgraph (import: at least 10 minutes); a paused or unreachable alpha then answers 503; negative = none (env KNOWMIND_DGRAPH_TIMEOUT)")
	fs.IntVar(&c.TenantInFlight, "tenant-in-flight", atoiOr(envOr("tenant-in-flight", ""), handlers.DefaultTenantInFlight),
		"tool calls one tenant may have running at once, more are refused with 429; negative = unbounded (env KNOWMIND_TENANT_IN_FLIGHT)")
	fs.DurationVar(&c.ShutdownTimeout, "shutdown-timeout", 10*time.Second, "graceful shutdown timeout")
	fs.StringVar(&c.LogLevel, "log-level", envOr("log-level", "info"), "debug, info, warn, error (env KNOWMIND_LOG_LEVEL)")
	fs.BoolVar(&c.WarmTextStats, "warm-text-stats", boolOr(envOr("warm-text-stats", ""), true),
		"load every tenant's BM25 statistics (and vectors) in the background at startup instead of on its first recall (env KNOWMIND_WARM_TEXT_STATS)")
	fs.BoolVar(&c.ExactVectors, "exact-vectors", boolOr(envOr("exact-vectors", ""), true),
		"hold every tenant's chunk vectors in the service (4·dim bytes a chunk) so recall finds vector candidates exactly; off: Dgraph's approximate HNSW only (env KNOWMIND_EXACT_VECTORS)")
	fs.StringVar(&c.IndexDir, "index-dir", envOr("index-dir", ""),
		"directory of the tenants' index snapshots (BM25 statistics, vectors, semantic model), read at a restart instead of rebuilding them from Dgraph; default data-dir/index, also with an external --dgraph; none = not persisted (env KNOWMIND_INDEX_DIR)")
	fs.IntVar(&c.IndexMemoryMB, "index-memory-mb", atoiOr(envOr("index-memory-mb", ""), DefaultIndexMemoryMB),
		"bound of the open tenants' derived indexes together (MB): over it the least recently used tenants' indexes are dropped to their snapshots and read back on their next recall; 0 = unbounded (env KNOWMIND_INDEX_MEMORY_MB)")
	fs.StringVar(&c.Extractor, "extractor", envOr("extractor", "rules"), "knowmind_capture's default extractor: rules (offline) or llm (env KNOWMIND_EXTRACTOR)")
	fs.StringVar(&c.LLMURL, "llm-url", envOr("llm-url", ""), "base URL of an OpenAI-compatible chat completions server for the llm extractor; key in KNOWMIND_LLM_API_KEY (env KNOWMIND_LLM_URL)")
	fs.StringVar(&c.LLMModel, "llm-model", envOr("llm-model", ""), "model name for the llm extractor (env KNOWMIND_LLM_MODEL)")
	fs.DurationVar(&c.LLMTimeout, "llm-timeout", 60*time.Second, "per-request timeout of the llm extractor")
	return func() error {
		_, c.DgraphPortOffsetSet = os.LookupEnv("KNOWMIND_DGRAPH_PORT_OFFSET")
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "dgraph-port-offset" {
				c.DgraphPortOffsetSet = true
			}
		})
		return c.complete(dgraph, dgraphHTTP, origins, oauthAudience, proxies, secretFile, passwordFile)
	}
}

func (c *Config) complete(dgraph, dgraphHTTP, origins, oauthAudience, proxies, secretFile, passwordFile string) error {
	c.Dgraph, c.DgraphHTTP, c.AllowedOrigins = splitList(dgraph), splitList(dgraphHTTP), splitList(origins)
	c.OAuthAudience = splitList(oauthAudience)
	// Secrets from files keep them out of `ps` and `docker inspect`.
	for _, f := range []struct {
		file, flag string
		value      *string
	}{{secretFile, "secret", &c.Secret}, {passwordFile, "dgraph-password", &c.DgraphPassword}} {
		if f.file == "" {
			continue
		}
		if *f.value != "" {
			return fmt.Errorf("--%s and --%s-file are both set: use one", f.flag, f.flag)
		}
		data, err := os.ReadFile(f.file)
		if err != nil {
			return fmt.Errorf("--%s-file: %w", f.flag, err)
		}
		*f.value = strings.TrimRight(string(data), "\r\n")
		if *f.value == "" {
			return fmt.Errorf("--%s-file %s is empty", f.flag, f.file)
		}
	}
	// The secret derives every tenant namespace's password.
	if c.Secret != "" && len(c.Secret) < minSecretBytes {
		return fmt.Errorf("--secret must be at least %d bytes (e.g. openssl rand -hex 32)", minSecretBytes)
	}
	for _, p := range splitList(proxies) {
		prefix, err := netip.ParsePrefix(p)
		if err != nil {
			addr, aerr := netip.ParseAddr(p)
			if aerr != nil {
				return fmt.Errorf("--trusted-proxies: %q is neither an address nor a CIDR range", p)
			}
			prefix = netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())
		}
		c.TrustedProxies = append(c.TrustedProxies, prefix.Masked())
	}
	return c.absPaths()
}

// absPaths makes every path setting absolute, once, at start-up: the managed
// Dgraph's children run in their own working directory, and a relative
// data dir handed to them (the default ./data) pointed nowhere.
func (c *Config) absPaths() error {
	if c.IndexDir == "" && c.DataDir != "" {
		c.IndexDir = filepath.Join(c.DataDir, "index")
	}
	for _, p := range []*string{&c.DataDir, &c.DgraphBin, &c.EncryptKeyFile, &c.ShapesDir, &c.ModelDir, &c.RerankerDir, &c.JWTPublicKeys, &c.IndexDir} {
		if *p == "" || (p == &c.IndexDir && *p == "none") {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err != nil {
			return fmt.Errorf("path %q: %w", *p, err)
		}
		*p = abs
	}
	return nil
}

func atoiOr(s string, def int) int {
	if v, err := strconv.Atoi(s); err == nil {
		return v
	}
	return def
}

func durationOr(s string, def time.Duration) time.Duration {
	if v, err := time.ParseDuration(s); err == nil {
		return v
	}
	return def
}

func boolOr(s string, def bool) bool {
	if v, err := strconv.ParseBool(s); err == nil {
		return v
	}
	return def
}

func atofOr(s string, def float64) float64 {
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return v
	}
	return def
}
