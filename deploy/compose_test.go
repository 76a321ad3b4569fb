package deploy

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// The files under test, relative to this package's directory.
const (
	composeFile    = "../docker-compose.yml"
	clusterFile    = "compose.cluster.yml"
	dockerfile     = "Dockerfile"
	envExample     = ".env.example"
	dgraphGoMod    = "dgraph/go.mod"
	makefile       = "../Makefile"
	serviceConfig  = "../cmd/knowmind/config.go"
	serviceCmdDir  = "../cmd/knowmind"
	serviceAddrEnv = "KNOWMIND_ADDR"
)

// compose is the part of the compose format these files use. Commands and
// healthcheck tests are lists (exec form) so they can be checked flag by
// flag; a string there fails to decode, which is intended.
type compose struct {
	Name     string
	Services map[string]service
	Volumes  map[string]any
	Networks map[string]struct {
		IPAM struct {
			Config []struct {
				Subnet string
			}
		} `yaml:"ipam"`
	}
}

type service struct {
	Image string
	Build *struct {
		Context    string
		Dockerfile string
	}
	Command     []string
	Environment map[string]string
	Ports       []string
	Volumes     []string
	Tmpfs       []string
	Networks    []string
	Restart     string
	DependsOn   map[string]struct{ Condition string } `yaml:"depends_on"`
	Healthcheck *struct {
		Test              []string
		Interval, Timeout string
		StartPeriod       string `yaml:"start_period"`
		Retries           int
	}
}

// testEnv is a filled-in .env: what an operator following the README has.
var testEnv = map[string]string{
	"KNOWMIND_SECRET":          "0123456789abcdef0123456789abcdef",
	"KNOWMIND_DGRAPH_PASSWORD": "s3cret-guardian",
	// As .env.example sets it: encryption at rest with dgraph-init's key.
	"DGRAPH_ENCRYPTION_KEY_FILE": "/secrets/encryption-key",
}

// loadCompose parses a compose file and interpolates ${...} in every value
// as compose does, with env standing for the .env file.
func loadCompose(t testing.TB, path string, env map[string]string) compose {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var errs []string
	walkScalars(&root, func(n *yaml.Node) {
		v, err := interpolate(n.Value, env)
		if err != nil {
			errs = append(errs, fmt.Sprintf("line %d: %v", n.Line, err))
		}
		n.Value = v
	})
	if len(errs) > 0 {
		t.Fatalf("%s: interpolation: %s", path, strings.Join(errs, "; "))
	}
	var c compose
	if err := root.Decode(&c); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(c.Services) == 0 {
		t.Fatalf("%s: no services", path)
	}
	return c
}

// walkScalars visits every scalar once; aliases share their anchor's nodes,
// so they are not followed.
func walkScalars(n *yaml.Node, fn func(*yaml.Node)) {
	switch n.Kind {
	case yaml.ScalarNode:
		fn(n)
	case yaml.AliasNode:
	default:
		for _, c := range n.Content {
			walkScalars(c, fn)
		}
	}
}

var varRef = regexp.MustCompile(`\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-?])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// interpolate implements compose's $VAR, ${VAR}, ${VAR:-default},
// ${VAR-default}, ${VAR:?error}, ${VAR?error} and $$.
func interpolate(s string, env map[string]string) (string, error) {
	var firstErr error
	out := varRef.ReplaceAllStringFunc(s, func(m string) string {
		if m == "$$" {
			return "$"
		}
		sub := varRef.FindStringSubmatch(m)
		name, op, arg := sub[1], sub[2], sub[3]
		if name == "" {
			name = sub[4]
		}
		v, set := env[name]
		switch op {
		case ":-":
			if v == "" {
				return arg
			}
		case "-":
			if !set {
				return arg
			}
		case ":?":
			if v == "" && firstErr == nil {
				firstErr = fmt.Errorf("required variable %s is missing a value: %s", name, arg)
			}
		case "?":
			if !set && firstErr == nil {
				firstErr = fmt.Errorf("required variable %s is missing: %s", name, arg)
			}
		}
		return v
	})
	return out, firstErr
}

// flagValue returns the value of --name=value or --name value in a command.
func flagValue(cmd []string, name string) (string, bool) {
	for i, a := range cmd {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(cmd) {
			return cmd[i+1], true
		}
	}
	return "", false
}

// superflag reads one key of a Dgraph superflag ("a=1; b=2;").
func superflag(value, key string) (string, bool) {
	for _, part := range strings.Split(value, ";") {
		k, v, ok := strings.Cut(strings.TrimSpace(part), "=")
		if ok && k == key {
			return v, true
		}
	}
	return "", false
}

// pinnedDgraphVersion is the Dgraph version deploy/dgraph builds for the
// managed mode; the images must run the same server.
func pinnedDgraphVersion(t testing.TB) string {
	t.Helper()
	data, err := os.ReadFile(dgraphGoMod)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*(?:require\s+)?github\.com/dgraph-io/dgraph/v\d+\s+(v\d+\.\d+\.\d+)\s*$`).FindSubmatch(data)
	if m == nil {
		t.Fatalf("%s: no dgraph require line", dgraphGoMod)
	}
	return string(m[1])
}

// serviceEnvVars lists the KNOWMIND_* variables the service reads: every
// envOr("flag-name", ...) (config.go: each flag's variable) and every
// os.Getenv / os.LookupEnv("KNOWMIND_...") in cmd/knowmind. cmd is package
// main, so its source is parsed rather than imported.
func serviceEnvVars(t testing.TB) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(serviceCmdDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok || len(call.Args) == 0 {
				return true
			}
			lit, ok := call.Args[0].(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			arg, _ := strconv.Unquote(lit.Value)
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				if fn.Name == "envOr" {
					vars["KNOWMIND_"+strings.ToUpper(strings.ReplaceAll(arg, "-", "_"))] = true
				}
			case *ast.SelectorExpr:
				if (fn.Sel.Name == "Getenv" || fn.Sel.Name == "LookupEnv") && strings.HasPrefix(arg, "KNOWMIND_") {
					vars[arg] = true
				}
			}
			return true
		})
	}
	if !vars[serviceAddrEnv] || len(vars) < 5 {
		t.Fatalf("found only %v in %s; has the config moved?", vars, serviceConfig)
	}
	return vars
}

// subcommands lists the names registered with register("name", ...) in
// cmd/knowmind, so a compose command or healthcheck cannot name one that
// does not exist.
func subcommands(t testing.TB) map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(serviceCmdDir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`\bregister\(\s*"([a-z-]+)"`)
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllSubmatch(data, -1) {
			out[string(m[1])] = true
		}
	}
	return out
}

func isDgraph(s service) bool { return strings.HasPrefix(s.Image, "dgraph/dgraph:") }

func dgraphRole(s service) string {
	if isDgraph(s) && len(s.Command) >= 2 && s.Command[0] == "dgraph" {
		return s.Command[1]
	}
	return ""
}

func isKnowmind(s service) bool {
	return strings.HasPrefix(s.Image, "knowmind:") || s.Build != nil && strings.HasSuffix(s.Build.Dockerfile, "deploy/Dockerfile")
}

func oneShot(s service) bool { return s.Restart == "no" }

func sortedNames(c compose, keep func(service) bool) []string {
	var out []string
	for name, s := range c.Services {
		if keep(s) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func TestComposeRequiresSecretsFromEnv(t *testing.T) {
	for _, path := range []string{composeFile, clusterFile} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var root yaml.Node
		if err := yaml.Unmarshal(data, &root); err != nil {
			t.Fatal(err)
		}
		// Without a .env, compose must refuse to start, naming what to set.
		var missing []string
		walkScalars(&root, func(n *yaml.Node) {
			if _, err := interpolate(n.Value, nil); err != nil {
				missing = append(missing, err.Error())
			}
		})
		for _, v := range []string{"KNOWMIND_SECRET", "KNOWMIND_DGRAPH_PASSWORD"} {
			if !slices.ContainsFunc(missing, func(m string) bool { return strings.Contains(m, v+" ") }) {
				t.Errorf("%s: %s must be required (${%s:?...}); got %v", path, v, v, missing)
			}
		}
		// ... and the secrets must never be literals in the file.
		c := loadCompose(t, path, testEnv)
		for name, s := range c.Services {
			for _, v := range []string{"KNOWMIND_SECRET", "KNOWMIND_DGRAPH_PASSWORD"} {
				if got, ok := s.Environment[v]; ok && got != testEnv[v] {
					t.Errorf("%s: service %s: %s = %q, want it from .env", path, name, v, got)
				}
			}
		}
	}
}

func TestEnvExampleNamesEveryRequiredVariable(t *testing.T) {
	data, err := os.ReadFile(envExample)
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{composeFile, clusterFile} {
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\$\{([A-Z_0-9]+):?[-?]`).FindAllSubmatch(src, -1) {
			if !regexp.MustCompile(`(?m)^#?\s*` + string(m[1]) + `=`).Match(data) {
				t.Errorf("%s uses %s; %s does not mention it", path, m[1], envExample)
			}
		}
	}
}

func TestDgraphImagesPinnedToBuiltVersion(t *testing.T) {
	version := pinnedDgraphVersion(t)
	mk, err := os.ReadFile(makefile)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^DGRAPH_VERSION\s*:?=\s*` + regexp.QuoteMeta(version) + `\s*$`).Match(mk) {
		t.Errorf("Makefile DGRAPH_VERSION differs from %s in %s", version, dgraphGoMod)
	}
	for _, path := range []string{composeFile, clusterFile} {
		c := loadCompose(t, path, testEnv)
		dgraphs := 0
		for name, s := range c.Services {
			if s.Image == "" {
				continue
			}
			repo, tag, ok := strings.Cut(s.Image, ":")
			if !ok || tag == "" || tag == "latest" {
				t.Errorf("%s: service %s: image %q is not pinned to a tag", path, name, s.Image)
			}
			if repo == "dgraph/dgraph" {
				dgraphs++
				if tag != version {
					t.Errorf("%s: service %s runs Dgraph %s, deploy/dgraph builds %s", path, name, tag, version)
				}
			}
		}
		if dgraphs == 0 {
			t.Errorf("%s: no dgraph/dgraph service", path)
		}
	}
}

func TestKnowmindEnvironmentMatchesServiceFlags(t *testing.T) {
	flags := serviceEnvVars(t)
	cmds := subcommands(t)
	for _, name := range []string{"serve", "healthcheck", "dgraph-password", "tenant"} {
		if !cmds[name] {
			t.Errorf("cmd/knowmind registers no %q subcommand (registered: %v)", name, cmds)
		}
	}
	for _, path := range []string{composeFile, clusterFile} {
		c := loadCompose(t, path, testEnv)
		for _, name := range sortedNames(c, isKnowmind) {
			s := c.Services[name]
			for v := range s.Environment {
				if strings.HasPrefix(v, "KNOWMIND_") && !flags[v] {
					t.Errorf("%s: service %s sets %s, which no flag of knowmind serve reads", path, name, v)
				}
			}
			if len(s.Command) == 0 || !cmds[s.Command[0]] {
				t.Errorf("%s: service %s: command %v is not a knowmind subcommand", path, name, s.Command)
			}
			for _, v := range []string{"KNOWMIND_DGRAPH", "KNOWMIND_DGRAPH_HTTP", "KNOWMIND_DGRAPH_PASSWORD", "KNOWMIND_SECRET"} {
				if s.Environment[v] == "" {
					t.Errorf("%s: service %s: %s is not set", path, name, v)
				}
			}
			if s.Build != nil {
				df := filepath.Join(filepath.Dir(path), s.Build.Context, s.Build.Dockerfile)
				if _, err := os.Stat(df); err != nil {
					t.Errorf("%s: service %s builds from %s: %v", path, name, df, err)
				}
			}
		}
	}
}

func TestPortsOnLoopback(t *testing.T) {
	for _, path := range []string{composeFile, clusterFile} {
		c := loadCompose(t, path, testEnv)
		seen := map[string]string{}
		for name, s := range c.Services {
			for _, p := range s.Ports {
				// host_ip:host_port:container_port
				parts := strings.Split(p, ":")
				if len(parts) != 3 || net.ParseIP(parts[0]) == nil || !net.ParseIP(parts[0]).IsLoopback() {
					t.Errorf("%s: service %s publishes %q; by default ports must be bound to 127.0.0.1", path, name, p)
					continue
				}
				if other, dup := seen[parts[1]]; dup {
					t.Errorf("%s: host port %s published by %s and %s", path, parts[1], other, name)
				}
				seen[parts[1]] = name
			}
		}
		// Ratel runs in the browser and talks to an alpha's HTTP port, so
		// that one must be published, and Ratel itself.
		if seen["8000"] == "" || seen["8080"] == "" {
			t.Errorf("%s: Ratel (8000) and an alpha's HTTP port (8080) must be published on loopback; have %v", path, seen)
		}
	}
}

func TestHealthchecksRestartsAndDependencies(t *testing.T) {
	for _, path := range []string{composeFile, clusterFile} {
		c := loadCompose(t, path, testEnv)
		completedBy := map[string]bool{}
		for name, s := range c.Services {
			for dep, d := range s.DependsOn {
				target, ok := c.Services[dep]
				if !ok {
					t.Errorf("%s: %s depends on unknown service %s", path, name, dep)
					continue
				}
				switch {
				case oneShot(target) && d.Condition != "service_completed_successfully":
					t.Errorf("%s: %s waits for one-shot %s with %q", path, name, dep, d.Condition)
				case !oneShot(target) && d.Condition != "service_healthy":
					t.Errorf("%s: %s waits for %s with %q, want service_healthy", path, name, dep, d.Condition)
				case !oneShot(target) && target.Healthcheck == nil:
					t.Errorf("%s: %s waits for %s to be healthy, but it has no healthcheck", path, name, dep)
				}
				if oneShot(target) {
					completedBy[dep] = true
				}
			}
		}
		for name, s := range c.Services {
			if oneShot(s) {
				// A one-shot that nothing waits for could fail unnoticed.
				if !completedBy[name] {
					t.Errorf("%s: one-shot %s is not waited for by any service", path, name)
				}
				continue
			}
			if !slices.Contains([]string{"always", "unless-stopped", "on-failure"}, s.Restart) {
				t.Errorf("%s: service %s: restart %q", path, name, s.Restart)
			}
			if s.Healthcheck == nil || len(s.Healthcheck.Test) < 2 || s.Healthcheck.Test[0] != "CMD" {
				t.Errorf("%s: service %s needs an exec-form healthcheck", path, name)
				continue
			}
			test := s.Healthcheck.Test
			switch role := dgraphRole(s); {
			case role == "zero":
				if !strings.HasSuffix(test[len(test)-1], ":6080/health") {
					t.Errorf("%s: zero healthcheck %v, want its HTTP /health on 6080", path, test)
				}
			case role == "alpha":
				if !strings.HasSuffix(test[len(test)-1], ":8080/health") {
					t.Errorf("%s: %s healthcheck %v, want its HTTP /health on 8080", path, name, test)
				}
			case isKnowmind(s):
				// The image has no curl: the binary's own subcommand.
				if !strings.HasSuffix(test[1], "knowmind") || !slices.Contains(test, "healthcheck") {
					t.Errorf("%s: %s healthcheck %v, want `knowmind healthcheck`", path, name, test)
				}
			}
		}
		// knowmind starts only when every alpha is healthy and the guardian
		// password is in place.
		alphas := sortedNames(c, func(s service) bool { return dgraphRole(s) == "alpha" })
		km := c.Services["knowmind"]
		for _, a := range alphas {
			if km.DependsOn[a].Condition != "service_healthy" {
				t.Errorf("%s: knowmind must depend on %s being healthy", path, a)
			}
		}
		if km.DependsOn["dgraph-password"].Condition != "service_completed_successfully" {
			t.Errorf("%s: knowmind must wait for dgraph-password", path)
		}
	}
}

func TestVolumesDeclaredAndUsed(t *testing.T) {
	for _, path := range []string{composeFile, clusterFile} {
		c := loadCompose(t, path, testEnv)
		used := map[string]bool{}
		for name, s := range c.Services {
			for _, v := range s.Volumes {
				src, _, ok := strings.Cut(v, ":")
				if !ok {
					t.Errorf("%s: %s: anonymous volume %q", path, name, v)
					continue
				}
				if strings.HasPrefix(src, ".") || strings.HasPrefix(src, "/") {
					t.Errorf("%s: %s bind-mounts %q; state belongs in named volumes", path, name, v)
					continue
				}
				if _, ok := c.Volumes[src]; !ok {
					t.Errorf("%s: %s uses undeclared volume %s", path, name, src)
				}
				used[src] = true
			}
			// The knowmind image declares VOLUME /data: a service of that image that mounts
			// nothing there gets a fresh anonymous volume on every up, left behind by down.
			if s.Image == "knowmind:local" && !slices.Contains(s.Tmpfs, "/data") &&
				!slices.ContainsFunc(s.Volumes, func(v string) bool { return strings.HasSuffix(v, ":/data") }) {
				t.Errorf("%s: %s runs the knowmind image with nothing at /data (an anonymous volume per up)", path, name)
			}
			// Dgraph keeps its state in its working directory /dgraph.
			if role := dgraphRole(s); role == "zero" || role == "alpha" {
				if !slices.ContainsFunc(s.Volumes, func(v string) bool { return strings.Contains(v, ":/dgraph") && !strings.HasSuffix(v, ":ro") }) {
					t.Errorf("%s: %s keeps no state in a volume at /dgraph", path, name)
				}
			}
		}
		for v := range c.Volumes {
			if !used[v] {
				t.Errorf("%s: volume %s declared but unused", path, v)
			}
		}
	}
}

func TestDgraphCommandsConsistent(t *testing.T) {
	for _, path := range []string{composeFile, clusterFile} {
		c := loadCompose(t, path, testEnv)
		zeros := sortedNames(c, func(s service) bool { return dgraphRole(s) == "zero" })
		alphas := sortedNames(c, func(s service) bool { return dgraphRole(s) == "alpha" })
		if len(zeros) != 1 || len(alphas) == 0 {
			t.Fatalf("%s: zeros %v, alphas %v", path, zeros, alphas)
		}
		zero := c.Services[zeros[0]]
		if my, _ := flagValue(zero.Command, "my"); my != zeros[0]+":5080" {
			t.Errorf("%s: zero --my=%q, want %s:5080 (its service name)", path, my, zeros[0])
		}
		var subnets []string
		for _, n := range c.Networks {
			for _, cfg := range n.IPAM.Config {
				subnets = append(subnets, cfg.Subnet)
			}
		}
		// The ACL key: written by the one-shot dgraph-init into a volume
		// every alpha mounts at the path --acl names.
		init := c.Services["dgraph-init"]
		if !oneShot(init) || len(init.Volumes) != 1 {
			t.Fatalf("%s: dgraph-init must be a one-shot with one volume", path)
		}
		secretVol, secretDir, _ := strings.Cut(init.Volumes[0], ":")
		if !strings.Contains(strings.Join(init.Command, " "), secretDir+"/acl-secret") {
			t.Errorf("%s: dgraph-init does not write %s/acl-secret", path, secretDir)
		}
		idx := map[string]string{}
		for _, name := range alphas {
			s := c.Services[name]
			if my, _ := flagValue(s.Command, "my"); my != name+":7080" {
				t.Errorf("%s: %s --my=%q, want %s:7080 (its service name, internal port)", path, name, my, name)
			}
			if z, _ := flagValue(s.Command, "zero"); z != zeros[0]+":5080" {
				t.Errorf("%s: %s --zero=%q, want %s:5080", path, name, z, zeros[0])
			}
			acl, ok := flagValue(s.Command, "acl")
			file, _ := superflag(acl, "secret-file")
			if !ok || file == "" {
				t.Errorf("%s: %s runs without ACL (--acl secret-file=...): namespaces need it", path, name)
			} else if !slices.Contains(s.Volumes, secretVol+":"+filepath.Dir(file)+":ro") {
				t.Errorf("%s: %s reads %s, but does not mount %s read-only at %s", path, name, file, secretVol, filepath.Dir(file))
			}
			enc, _ := flagValue(s.Command, "encryption")
			if key, _ := superflag(enc, "key-file"); key != testEnv["DGRAPH_ENCRYPTION_KEY_FILE"] {
				t.Errorf("%s: %s --encryption key-file=%q, want DGRAPH_ENCRYPTION_KEY_FILE (%s)", path, name, key, testEnv["DGRAPH_ENCRYPTION_KEY_FILE"])
			} else if !strings.Contains(strings.Join(init.Command, " "), key) || !slices.Contains(s.Volumes, secretVol+":"+filepath.Dir(key)+":ro") {
				t.Errorf("%s: %s reads its encryption key %s, which dgraph-init does not write into a volume it mounts", path, name, key)
			}
			sec, _ := flagValue(s.Command, "security")
			wl, _ := superflag(sec, "whitelist")
			for _, sn := range subnets {
				if !slices.Contains(strings.Split(wl, ","), sn) {
					t.Errorf("%s: %s whitelist %q lacks the compose subnet %s (knowmind creates namespaces through /admin)", path, name, wl, sn)
				}
			}
			if tel, _ := flagValue(s.Command, "telemetry"); !strings.Contains(tel, "reports=false") || !strings.Contains(tel, "sentry=false") {
				t.Errorf("%s: %s telemetry %q, want reports and sentry off", path, name, tel)
			}
			cache, _ := flagValue(s.Command, "cache")
			if mb, _ := superflag(cache, "size-mb"); mb == "" {
				t.Errorf("%s: %s has no cache bound (--cache size-mb=...)", path, name)
			}
			if r, ok := flagValue(s.Command, "raft"); ok {
				id, _ := superflag(r, "idx")
				if other, dup := idx[id]; dup {
					t.Errorf("%s: %s and %s share raft idx %s", path, name, other, id)
				}
				idx[id] = name
			}
		}
		// knowmind talks to every alpha: gRPC for queries, HTTP for /admin.
		km := c.Services["knowmind"]
		var grpc, http []string
		for _, a := range alphas {
			grpc, http = append(grpc, a+":9080"), append(http, a+":8080")
		}
		if got := km.Environment["KNOWMIND_DGRAPH"]; got != strings.Join(grpc, ",") {
			t.Errorf("%s: KNOWMIND_DGRAPH=%q, want %q", path, got, strings.Join(grpc, ","))
		}
		if got := km.Environment["KNOWMIND_DGRAPH_HTTP"]; got != strings.Join(http, ",") {
			t.Errorf("%s: KNOWMIND_DGRAPH_HTTP=%q, want %q", path, got, strings.Join(http, ","))
		}
		if addr := km.Environment[serviceAddrEnv]; !strings.HasPrefix(addr, "0.0.0.0:") {
			t.Errorf("%s: %s=%q: inside a container the service must listen on all interfaces", path, serviceAddrEnv, addr)
		}
	}
}

func TestClusterHasThreeReplicatedAlphas(t *testing.T) {
	c := loadCompose(t, clusterFile, testEnv)
	alphas := sortedNames(c, func(s service) bool { return dgraphRole(s) == "alpha" })
	if len(alphas) != 3 {
		t.Fatalf("cluster alphas %v, want 3", alphas)
	}
	if r, _ := flagValue(c.Services["zero"].Command, "replicas"); r != "3" {
		t.Errorf("cluster zero --replicas=%q, want 3", r)
	}
	single := loadCompose(t, composeFile, testEnv)
	if got := sortedNames(single, func(s service) bool { return dgraphRole(s) == "alpha" }); len(got) != 1 {
		t.Errorf("docker-compose.yml alphas %v, want one", got)
	}
}

// dockerfileStages parses FROM lines: image (ARG defaults substituted) and
// stage name.
type stage struct{ image, name string }

func parseDockerfile(t testing.TB) (stages []stage, lines []string) {
	t.Helper()
	data, err := os.ReadFile(dockerfile)
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines.
	text := regexp.MustCompile(`\\\n\s*`).ReplaceAllString(string(data), " ")
	args := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		lines = append(lines, l)
		f := strings.Fields(l)
		switch strings.ToUpper(f[0]) {
		case "ARG":
			if k, v, ok := strings.Cut(f[1], "="); ok {
				args[k] = v
			}
		case "FROM":
			img, _ := interpolate(f[1], args)
			st := stage{image: img}
			if len(f) == 4 && strings.EqualFold(f[2], "AS") {
				st.name = f[3]
			}
			stages = append(stages, st)
		}
	}
	return stages, lines
}

func TestDockerfile(t *testing.T) {
	stages, lines := parseDockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("want a multi-stage build, got %v", stages)
	}
	names := map[string]bool{}
	for _, s := range stages {
		// Images are named, never pulled from a named host (the brief: no
		// registry host names in the repository).
		if host, _, ok := strings.Cut(s.image, "/"); ok && strings.ContainsAny(host, ".:") {
			t.Errorf("FROM %s names a registry host", s.image)
		}
		_, tag, ok := strings.Cut(s.image, ":")
		if s.image != "scratch" && (!ok || tag == "" || strings.HasPrefix(tag, "latest")) {
			t.Errorf("FROM %s is not pinned to a tag", s.image)
		}
		if s.name == "" {
			t.Errorf("FROM %s has no stage name", s.image)
		}
		names[s.name] = true
	}
	if !strings.HasPrefix(stages[0].image, "golang:") {
		t.Errorf("build stage %s, want golang", stages[0].image)
	}
	if final := stages[len(stages)-1].image; final != "scratch" {
		t.Errorf("runtime image %s, want scratch: an empty image holding only what the binary reads", final)
	}
	var user, expose, health, build string
	runtimeCopies := map[string]string{} // destination → the COPY line, in the last stage
	froms := 0
	for _, l := range lines {
		f := strings.Fields(l)
		switch strings.ToUpper(f[0]) {
		case "FROM":
			froms++
		case "COPY":
			for _, a := range f[1:] {
				if from, ok := strings.CutPrefix(a, "--from="); ok && !names[from] {
					t.Errorf("%q copies from unknown stage %s", l, from)
				}
			}
			if froms == len(stages) {
				runtimeCopies[f[len(f)-1]] = l
			}
		case "USER":
			user = f[1]
		case "EXPOSE":
			expose = f[1]
		case "HEALTHCHECK":
			health = l
		case "RUN":
			if strings.Contains(l, "go build") {
				build = l
			}
		}
	}
	if user == "" || user == "root" || strings.HasPrefix(user, "0") {
		t.Errorf("USER %q: the image must not run as root", user)
	}
	if !regexp.MustCompile(`^[1-9][0-9]*:[1-9][0-9]*$`).MatchString(user) {
		t.Errorf("USER %q: want uid:gid as numbers, the image has no /etc/passwd", user)
	}
	// What the empty image must be given: the CA certificates (OAuth
	// issuers, JWKS and an LLM endpoint over HTTPS), a /tmp, the binary and
	// a /data the runtime user owns, and the word lists recall reads (German
	// compound splitting, the English everyday-word rule).
	for dest, want := range map[string]string{
		"/etc/ssl/certs/ca-certificates.crt": "--from=build",
		"/usr/share/dict":                    "--from=build",
		"/tmp":                               "--from=build",
		"/usr/local/bin/knowmind":            "--from=build",
		"/data":                              "--chown=" + user,
	} {
		if l, ok := runtimeCopies[dest]; !ok || !strings.Contains(l, want) {
			t.Errorf("the runtime stage's COPY to %s: %q, want one with %s", dest, l, want)
		}
	}
	if expose != "8765" {
		t.Errorf("EXPOSE %q, want the service port 8765", expose)
	}
	if !strings.Contains(health, `"healthcheck"`) {
		t.Errorf("HEALTHCHECK %q, want the knowmind healthcheck subcommand", health)
	}
	if !strings.Contains(build, "CGO_ENABLED=0") || !strings.Contains(build, "./cmd/knowmind") {
		t.Errorf("build step %q, want CGO_ENABLED=0 go build ./cmd/knowmind", build)
	}
}

// The cluster's load balancer sends requests to every service replica and to nothing else, on
// the port they listen on, and is what publishes the service's port.
func TestLoadBalancerNamesEveryReplica(t *testing.T) {
	c := loadCompose(t, clusterFile, testEnv)
	var replicas []string
	for name, s := range c.Services {
		if isKnowmind(s) && slices.Equal(s.Command, []string{"serve"}) {
			replicas = append(replicas, name+":8765")
		}
	}
	slices.Sort(replicas)
	if len(replicas) < 2 {
		t.Fatalf("%s: %d service replicas, want at least 2", clusterFile, len(replicas))
	}
	cfg, err := os.ReadFile("lb/haproxy.cfg")
	if err != nil {
		t.Fatal(err)
	}
	var servers []string
	for _, line := range strings.Split(string(cfg), "\n") {
		if f := strings.Fields(line); len(f) >= 3 && f[0] == "server" {
			servers = append(servers, f[2])
		}
	}
	slices.Sort(servers)
	if !slices.Equal(servers, replicas) {
		t.Errorf("lb/haproxy.cfg sends to %v; the service replicas are %v", servers, replicas)
	}
	lb, ok := c.Services["lb"]
	if !ok || !slices.ContainsFunc(lb.Ports, func(p string) bool { return strings.HasSuffix(p, ":8765:8765") }) {
		t.Errorf("%s: the lb service must publish 8765, the service's port: %+v", clusterFile, lb.Ports)
	}
}
