package deploy

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/moby/moby/api/types/container"
	dockernet "github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"
	tcexec "github.com/testcontainers/testcontainers-go/exec"
	"github.com/testcontainers/testcontainers-go/network"
	"github.com/testcontainers/testcontainers-go/wait"

	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/graph/dgraphtest"
)

// dockerUnavailable is the cheap first check, so that `go test ./...` on a
// machine without Docker (this project's development machines) spends no
// time on the stack test: no DOCKER_HOST and no socket at the usual places.
func dockerUnavailable() string {
	if os.Getenv("DOCKER_HOST") != "" {
		return ""
	}
	socks := []string{"/var/run/docker.sock"}
	if home, err := os.UserHomeDir(); err == nil {
		socks = append(socks, filepath.Join(home, ".docker", "run", "docker.sock"), filepath.Join(home, ".docker", "desktop", "docker.sock"))
	}
	if xdg := os.Getenv("XDG_RUNTIME_DIR"); xdg != "" {
		socks = append(socks, filepath.Join(xdg, "docker.sock"))
	}
	for _, s := range socks {
		if _, err := os.Stat(s); err == nil {
			return ""
		}
	}
	return "DOCKER_HOST is unset and there is no Docker socket at " + strings.Join(socks, ", ")
}

// TestComposeStackUp brings up docker-compose.yml's services as containers
// with testcontainers-go: each service's image (knowmind built from
// deploy/Dockerfile), command, environment, named volumes and healthcheck
// exactly as the file says, on a network with the file's subnet and the
// service names as host names, in depends_on order. It then checks
// /readyz, creates a token with the documented command, and logs into the
// tenant's namespace with `knowmind tenant analyst` as an analyst would.
//
// Docker compose itself is not used here (TestDockerComposeSelfHost runs the
// real CLI); restart policies and published host ports are left to
// TestPortsOnLoopback and friends. Runs with KNOWMIND_TEST_DOCKER=1 on the
// local images of deploy/dockertest, like the compose tests.
func TestComposeStackUp(t *testing.T) {
	if reason := dockerUnavailable(); reason != "" {
		t.Skip("Docker engine not available: " + reason + "; the compose files are checked statically by the other tests in this package")
	}
	dockerTestSkip(t)
	if os.Getenv("TESTCONTAINERS_RYUK_DISABLED") == "" {
		// Ryuk's image cannot be pulled without a registry; t.Cleanup removes
		// what this test starts.
		t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	}
	if os.Getenv("TESTCONTAINERS_HOST_OVERRIDE") == "" {
		// The ports are published on loopback (below); without this,
		// testcontainers guesses the host from the default route.
		t.Setenv("TESTCONTAINERS_HOST_OVERRIDE", "127.0.0.1")
	}
	testcontainers.SkipIfProviderIsNotHealthy(t)
	// No registry: the images are the local stand-ins deploy/dockertest
	// builds (see TestDockerComposeSelfHost); Ratel's cannot be built.
	ensureLocalImages(t)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	env := map[string]string{"DGRAPH_SUBNET": fmt.Sprintf("172.30.%d.0/24", 100+rand.IntN(150))}
	for k, v := range testEnv {
		env[k] = v
	}
	c := loadCompose(t, composeFile, env)

	var subnet netip.Prefix
	for _, n := range c.Networks {
		subnet = netip.MustParsePrefix(n.IPAM.Config[0].Subnet)
	}
	nw, err := network.New(ctx, network.WithIPAM(&dockernet.IPAM{Config: []dockernet.IPAMConfig{{Subnet: subnet}}}))
	if err != nil {
		t.Fatalf("create network %s: %v", subnet, err)
	}
	testcontainers.CleanupNetwork(t, nw)

	// Named volumes get a per-run prefix and are removed at the end
	// (registered first, so it runs after every container is gone).
	prefix := fmt.Sprintf("knowmind-stacktest-%06d-", rand.IntN(1e6))
	t.Cleanup(func() {
		cli, err := testcontainers.NewDockerClientWithOpts(context.Background())
		if err != nil {
			return
		}
		defer cli.Close()
		for v := range c.Volumes {
			_, _ = cli.VolumeRemove(context.Background(), prefix+v, client.VolumeRemoveOptions{Force: true})
		}
	})

	started := map[string]testcontainers.Container{}
	for _, name := range startOrder(t, c) {
		s := c.Services[name]
		switch {
		case isDgraph(s):
			s.Image = localDgraphImage
		case s.Build != nil:
			s.Image, s.Build = localKnowmindImage, nil
		default:
			t.Logf("service %s (%s) not started: its image needs a registry; checked statically", name, s.Image)
			continue
		}
		req := testcontainers.ContainerRequest{
			Image:          s.Image,
			Cmd:            s.Command,
			Env:            s.Environment,
			Networks:       []string{nw.Name},
			NetworkAliases: map[string][]string{nw.Name: {name}},
			Name:           prefix + name,
		}
		for _, v := range s.Volumes {
			parts := strings.Split(v, ":")
			m := testcontainers.VolumeMount(prefix+parts[0], testcontainers.ContainerMountTarget(parts[1]))
			m.ReadOnly = len(parts) == 3 && parts[2] == "ro"
			req.Mounts = append(req.Mounts, m)
		}
		for _, p := range s.Ports {
			parts := strings.Split(p, ":")
			req.ExposedPorts = append(req.ExposedPorts, parts[len(parts)-1]+"/tcp")
		}
		// Everything the host reaches is published on 127.0.0.1 only (as the
		// compose files do), ports the image exposes included.
		req.HostConfigModifier = func(hc *container.HostConfig) {
			hc.PortBindings = dockernet.PortMap{}
			for _, p := range []string{"5080/tcp", "6080/tcp", "7080/tcp", "8080/tcp", "9080/tcp", "8765/tcp"} {
				hc.PortBindings[dockernet.MustParsePort(p)] = []dockernet.PortBinding{{HostIP: netip.MustParseAddr("127.0.0.1")}}
			}
		}
		switch {
		case oneShot(s):
			req.WaitingFor = wait.ForExit().WithExitTimeout(5 * time.Minute)
		case s.Healthcheck != nil:
			hc := s.Healthcheck
			req.ConfigModifier = func(cfg *container.Config) {
				cfg.Healthcheck = &container.HealthConfig{
					Test: hc.Test, Interval: duration(t, hc.Interval), Timeout: duration(t, hc.Timeout),
					StartPeriod: duration(t, hc.StartPeriod), Retries: hc.Retries,
				}
			}
			req.WaitingFor = wait.ForHealthCheck().WithStartupTimeout(5 * time.Minute)
		}
		start := time.Now()
		ctr, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{ContainerRequest: req, Started: true})
		testcontainers.CleanupContainer(t, ctr)
		if err != nil {
			t.Fatalf("service %s: %v\n%s", name, err, containerLogs(ctx, ctr))
		}
		if oneShot(s) {
			st, err := ctr.State(ctx)
			if err != nil || st.ExitCode != 0 {
				t.Fatalf("one-shot %s failed (state %+v, %v):\n%s", name, st, err, containerLogs(ctx, ctr))
			}
		}
		t.Logf("service %s up in %s", name, time.Since(start).Round(time.Millisecond))
		started[name] = ctr
	}

	km := started["knowmind"]
	endpoint, err := km.PortEndpoint(ctx, "8765/tcp", "http")
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(endpoint + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("/readyz: %d %s", resp.StatusCode, body)
	}
	t.Logf("/readyz: %s", body)

	// The README's first-run path.
	if !subcommands(t)["token"] {
		t.Fatal("cmd/knowmind has no token subcommand; README's first-run path needs it")
	}
	out := execOK(ctx, t, km, "knowmind", "token", "create", "--tenant", "acme", "--scopes", "read,write")
	t.Logf("token create: %d bytes of output", len(out))
	out = execOK(ctx, t, km, "knowmind", "tenant", "analyst", "--tenant", "acme")
	ns := regexp.MustCompile(`(?m)^namespace:\s+(\d+)`).FindStringSubmatch(out)
	user := regexp.MustCompile(`(?m)^user:\s+(\S+)`).FindStringSubmatch(out)
	pw := regexp.MustCompile(`(?m)^password:\s+(\S+)`).FindStringSubmatch(out)
	if ns == nil || user == nil || pw == nil {
		t.Fatalf("tenant analyst printed no namespace/user/password:\n%s", out)
	}
	grpcAddr, err := started["alpha"].PortEndpoint(ctx, "9080/tcp", "")
	if err != nil {
		t.Fatal(err)
	}
	nsID, _ := strconv.ParseUint(ns[1], 10, 64)
	dg := dgraphtest.Login(t, graph.NamespaceCredentials{User: user[1], Password: pw[1], Namespace: nsID}, grpcAddr)
	if _, err := dg.NewReadOnlyTxn().Query(ctx, `{ m(func: type(Meta)) { Meta.schema_version } }`); err != nil {
		t.Fatalf("analyst query: %v", err)
	}
}

// startOrder sorts services so that each starts after what it depends on.
func startOrder(t *testing.T, c compose) []string {
	var order []string
	state := map[string]int{} // 1 visiting, 2 done
	var visit func(string)
	visit = func(n string) {
		switch state[n] {
		case 1:
			t.Fatalf("depends_on cycle at %s", n)
		case 2:
			return
		}
		state[n] = 1
		for _, d := range sortedKeys(c.Services[n].DependsOn) {
			visit(d)
		}
		state[n] = 2
		order = append(order, n)
	}
	for _, n := range sortedNames(c, func(service) bool { return true }) {
		visit(n)
	}
	return order
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func duration(t *testing.T, s string) time.Duration {
	if s == "" {
		return 0
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("healthcheck duration %q: %v", s, err)
	}
	return d
}

func execOK(ctx context.Context, t *testing.T, ctr testcontainers.Container, cmd ...string) string {
	t.Helper()
	code, r, err := ctr.Exec(ctx, cmd, tcexec.Multiplexed())
	var out []byte
	if r != nil {
		out, _ = io.ReadAll(r)
	}
	if err != nil || code != 0 {
		t.Fatalf("%v: exit %d, %v\n%s", cmd, code, err, out)
	}
	return string(out)
}

func containerLogs(ctx context.Context, ctr testcontainers.Container) string {
	if ctr == nil {
		return ""
	}
	r, err := ctr.Logs(ctx)
	if err != nil {
		return ""
	}
	defer r.Close()
	b, _ := io.ReadAll(io.LimitReader(r, 64<<10))
	return string(b)
}
