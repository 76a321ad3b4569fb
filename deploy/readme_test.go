package deploy

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

const readme = "../README.md"

// readmeComposeCommands finds every `docker compose …` command the README
// tells an operator to type: lines of its code blocks and inline code spans.
func readmeComposeCommands(t *testing.T) []string {
	t.Helper()
	data, err := os.ReadFile(readme)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inBlock := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			inBlock = !inBlock
			continue
		}
		if inBlock {
			if cmd := strings.TrimSpace(line); strings.HasPrefix(cmd, "docker compose") {
				if i := strings.Index(cmd, " #"); i >= 0 {
					cmd = cmd[:i]
				}
				out = append(out, cmd)
			}
			continue
		}
	}
	// Inline spans may wrap across lines in the Markdown source.
	flat := strings.Join(strings.Fields(string(data)), " ")
	for _, m := range regexp.MustCompile("`(docker compose [^`]+)`").FindAllStringSubmatch(flat, -1) {
		out = append(out, m[1])
	}
	if len(out) < 8 {
		t.Fatalf("found only %d docker compose commands in the README: %q", len(out), out)
	}
	return out
}

// The README's compose commands name files, services, subcommands and paths
// that exist: a renamed service or subcommand breaks this test, not an
// operator's first day.
func TestReadmeComposeCommands(t *testing.T) {
	subs := subcommands(t)
	files := map[string]compose{}
	for _, cmd := range readmeComposeCommands(t) {
		args := strings.Fields(cmd)[2:]
		file := composeFile
		for len(args) > 0 && strings.HasPrefix(args[0], "-") {
			switch args[0] {
			case "-f":
				file = filepath.Join("..", args[1])
			case "--env-file":
				if args[1] != ".env" {
					t.Errorf("%q: env file %s is not the .env the README has the operator copy", cmd, args[1])
				}
			default:
				t.Errorf("%q: unknown global flag %s", cmd, args[0])
			}
			args = args[2:]
		}
		c, ok := files[file]
		if !ok {
			if _, err := os.Stat(file); err != nil {
				t.Errorf("%q: %v", cmd, err)
				continue
			}
			c = loadCompose(t, file, testEnv)
			files[file] = c
		}
		if len(args) == 0 {
			t.Errorf("%q: no subcommand", cmd)
			continue
		}
		verb, rest := args[0], args[1:]
		for len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
			rest = rest[1:] // -d, --build, --rm, -v
		}
		switch verb {
		case "ps", "down":
			continue
		case "up", "logs":
			for _, name := range rest {
				if _, ok := c.Services[name]; !ok {
					t.Errorf("%q: no service %q in %s", cmd, name, file)
				}
			}
		case "exec", "run":
			if len(rest) < 2 {
				t.Errorf("%q: %s needs a service and a command", cmd, verb)
				continue
			}
			name, argv := rest[0], rest[1:]
			s, ok := c.Services[name]
			if !ok {
				t.Errorf("%q: no service %q in %s", cmd, name, file)
				continue
			}
			if !isKnowmind(s) {
				continue
			}
			// The image's entrypoint is knowmind: `run` passes a subcommand,
			// `exec` a program in the image (knowmind, or cat of a file on a volume).
			switch {
			case verb == "run" || argv[0] == "knowmind":
				sub := argv[0]
				if verb == "exec" {
					if len(argv) < 2 {
						t.Errorf("%q: knowmind without a subcommand", cmd)
						continue
					}
					sub = argv[1]
				}
				if sub != "…" && !subs[sub] { // "…": the README's placeholder for any subcommand
					t.Errorf("%q: knowmind has no subcommand %q", cmd, sub)
				}
			case argv[0] == "cat" && len(argv) == 2:
				if !onVolume(s, argv[1]) {
					t.Errorf("%q: %s is not on a volume of service %s (%v)", cmd, argv[1], name, s.Volumes)
				}
			default:
				t.Errorf("%q: the knowmind image (FROM scratch) has no %q", cmd, argv[0])
			}
		default:
			t.Errorf("%q: unexpected compose subcommand %q", cmd, verb)
		}
	}
	// The images the README says `up` pulls are the ones the file pins.
	data, _ := os.ReadFile(readme)
	c := loadCompose(t, composeFile, testEnv)
	for _, img := range regexp.MustCompile(`dgraph/(?:dgraph|ratel):v[0-9.]+`).FindAllString(string(data), -1) {
		found := false
		for _, s := range c.Services {
			found = found || s.Image == img
		}
		if !found {
			t.Errorf("the README names image %s, which %s does not use", img, composeFile)
		}
	}
	if _, err := os.Stat(envExample); err != nil {
		t.Errorf("the README copies deploy/.env.example: %v", err)
	}
}

// onVolume reports whether path lies under one of the service's mounts.
func onVolume(s service, path string) bool {
	for _, v := range s.Volumes {
		parts := strings.Split(v, ":")
		if len(parts) >= 2 && (path == parts[1] || strings.HasPrefix(path, strings.TrimSuffix(parts[1], "/")+"/")) {
			return true
		}
	}
	return false
}
