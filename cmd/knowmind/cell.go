package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/knowmind/knowmind/cells"
	"github.com/knowmind/knowmind/embed"
	"github.com/knowmind/knowmind/english"
	"github.com/knowmind/knowmind/graph"
	"github.com/knowmind/knowmind/shapes"
)

func init() {
	register("cell", "cell add NAME --alphas HOST:9080 --guardian-password-file F --cell-secret-file F | cell list | cell move --tenant T --to CELL [--drop-source] | cell drop --tenant T --from CELL (tenants across Dgraph clusters)", runCell)
}

// homeCell is the name of the cell serve's own flags reach (the managed Dgraph of --data-dir or
// --dgraph): every tenant the directory does not list is there.
const homeCell = cells.HomeCell

// cellName is what a cell may be called: it names an export file and appears in logs.
var cellName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,39}$`)

// runCell keeps the cell directory, data-dir/cells.json (package cells): the other Dgraph
// clusters this deployment's tenants may live in, and which tenant lives where. It takes serve's
// flags and environment, which reach the home cell.
func runCell(ctx context.Context, args []string) error {
	const usage = "usage: knowmind cell add NAME --alphas HOST:9080[,...] --guardian-password-file FILE --cell-secret-file FILE [serve flags]\n" +
		"       knowmind cell list [serve flags]\n" +
		"       knowmind cell move --tenant NAME --to CELL [--drop-source] [--export-dir DIR] [serve flags]\n" +
		"       knowmind cell drop --tenant NAME --from CELL [serve flags]   (the copy a move left in CELL)"
	if len(args) == 0 {
		return errors.New(usage)
	}
	sub := args[0]
	fs := flag.NewFlagSet("cell "+sub, flag.ContinueOnError)
	alphas := fs.String("alphas", "", "add: the cell's Dgraph alphas, host:9080[,host:9080...]")
	alphasHTTP := fs.String("alphas-http", "", "add: their HTTP addresses, if not gRPC port - 1000")
	user := fs.String("guardian-user", "groot", "add: the cell's guardian user")
	passwordFile := fs.String("guardian-password-file", "", "add: file holding the cell's guardian password")
	secretFile := fs.String("cell-secret-file", "", "add: file holding the service secret of the cell's services (its tenants' namespace passwords derive from it)")
	tenant := fs.String("tenant", "", "move: the tenant")
	to := fs.String("to", "", "move: the cell to move it to ("+homeCell+": the cluster of serve's flags)")
	exportDir := fs.String("export-dir", "", "move: folder of the move's export file (default data-dir/cell-moves)")
	dropSource := fs.Bool("drop-source", false, "move: drop the tenant's namespace in the cell it left once the move is verified and every serve follows it")
	from := fs.String("from", "", "drop: the cell whose copy of the tenant to drop (one the tenant has left)")
	cfg, pos, err := parseFlags(fs, args[1:])
	if err != nil {
		return err
	}
	path := filepath.Join(cfg.DataDir, cells.DirectoryFileName)
	switch {
	case sub == "list" && len(pos) == 0:
		return listCells(path)
	case sub == "add" && len(pos) == 1:
		return addCell(ctx, cfg, path, pos[0], cells.Cell{Dgraph: splitList(*alphas), DgraphHTTP: splitList(*alphasHTTP),
			User: *user, PasswordFile: *passwordFile, SecretFile: *secretFile})
	case sub == "move" && len(pos) == 0 && *tenant != "" && *to != "":
		dir := *exportDir
		if dir == "" {
			dir = filepath.Join(cfg.DataDir, "cell-moves")
		}
		return moveTenant(ctx, cfg, path, *tenant, *to, dir, *dropSource)
	case sub == "drop" && len(pos) == 0 && *tenant != "" && *from != "":
		return dropCopy(ctx, cfg, path, *tenant, *from)
	}
	return errors.New(usage)
}

// lockDirectory holds an exclusive lock beside the directory file until the returned function
// is called: one command changes the directory at a time.
func lockDirectory(path string) (func(), error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("the cell directory %s is being changed by another command: %w", path, err)
	}
	return func() { f.Close() }, nil
}

func listCells(path string) error {
	d, err := cells.ReadDirectory(path)
	if err != nil {
		return err
	}
	fmt.Printf("cell %s: serve's own Dgraph; every tenant not listed below\n", homeCell)
	for _, name := range d.CellNames() {
		fmt.Printf("cell %s: %s\n", name, strings.Join(d.Cells[name].Dgraph, ","))
	}
	for _, name := range slices.Sorted(maps.Keys(d.Tenants)) {
		p := d.Tenants[name]
		mark := ""
		if p.ReadOnly {
			mark = " (read-only: a move is under way or was interrupted; `knowmind cell move` again finishes it)"
		}
		fmt.Printf("tenant %s: %s%s\n", name, p.Cell, mark)
	}
	return nil
}

func addCell(ctx context.Context, cfg Config, path, name string, c cells.Cell) error {
	if !cellName.MatchString(name) || name == homeCell {
		return fmt.Errorf("cell add: name %q: lower-case letters, digits and dashes, at most 40, not %q", name, homeCell)
	}
	if len(c.Dgraph) == 0 || c.PasswordFile == "" || c.SecretFile == "" {
		return errors.New("cell add needs --alphas, --guardian-password-file and --cell-secret-file")
	}
	for _, f := range []*string{&c.PasswordFile, &c.SecretFile} {
		abs, err := filepath.Abs(*f)
		if err != nil {
			return err
		}
		*f = abs
	}
	// The cell must answer with these credentials before the directory names it.
	set, err := shapes.Load(cfg.ShapesDir)
	if err != nil {
		return err
	}
	client, err := openCell(ctx, cfg, c, set, nil, false)
	if err != nil {
		return fmt.Errorf("cell add %s: %w", name, err)
	}
	client.Close()
	unlock, err := lockDirectory(path)
	if err != nil {
		return err
	}
	defer unlock()
	err = cells.UpdateDirectory(path, func(d *cells.Directory) error {
		if _, ok := d.Cells[name]; ok {
			return fmt.Errorf("cell add: %q is in the directory already", name)
		}
		d.Cells[name] = c
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "cell %s added: %s\n", name, strings.Join(c.Dgraph, ","))
	return nil
}

// openCell logs into a cell of the directory with its own guardian and service secret. Tenants
// are opened to serve them (serving: recall with exact vectors, as home's) or to export and
// import them; no snapshots either way.
func openCell(ctx context.Context, cfg Config, c cells.Cell, set *shapes.Set, emb embed.Embedder, serving bool) (*graph.Client, error) {
	password, err := readTrimmed(c.PasswordFile)
	if err != nil {
		return nil, err
	}
	secret, err := readTrimmed(c.SecretFile)
	if err != nil {
		return nil, err
	}
	if len(secret) < minSecretBytes {
		return nil, fmt.Errorf("cell secret in %s: %d bytes, want at least %d", c.SecretFile, len(secret), minSecretBytes)
	}
	gcfg := graph.Config{
		Alphas: c.Dgraph, AlphasHTTP: c.DgraphHTTP, User: cmp.Or(c.User, "groot"), Password: password,
		Secret: []byte(secret), Relations: set.Names(), Shapes: set, NoExactVectors: !serving,
		Logger: newLogger(cfg.LogLevel), RPCTimeout: max(cfg.DgraphTimeout, bulkRPCTimeout),
	}
	if emb != nil {
		gcfg.Embedder = emb
	}
	if serving { // read the lists only where recall needs them
		if levels := english.SystemLevels(); levels.Len() > 0 {
			gcfg.WordLevels = levels
		}
	}
	return graph.Open(ctx, gcfg)
}

// readTrimmed is a secret file's text without its line end.
func readTrimmed(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := strings.TrimRight(string(data), "\r\n")
	if s == "" {
		return "", fmt.Errorf("%s is empty", path)
	}
	return s, nil
}

func moveTenant(ctx context.Context, cfg Config, path, tenant, to, exportDir string, dropSource bool) error {
	return withRouter(ctx, cfg, path, "cell move", to, func(r *cells.Router) error {
		if err := os.MkdirAll(exportDir, 0o700); err != nil {
			return err
		}
		rep, err := r.Move(ctx, tenant, to, exportDir)
		if err != nil {
			return err
		}
		return reportMove(ctx, r, rep, tenant, dropSource)
	})
}

// reportMove prints what a move did and, when asked, drops the source's copy.
func reportMove(ctx context.Context, r *cells.Router, rep cells.MoveReport, tenant string, dropSource bool) error {
	fmt.Fprintf(os.Stderr, "tenant %s moved from %s to %s: %d records, %d tokens; serves confirmed %s, export %s, import %s, verify %s, read-only %s\n",
		tenant, rep.From, rep.To, rep.Records, rep.Tokens, rep.Confirm.Round(time.Millisecond), rep.Export.Round(time.Millisecond), rep.Import.Round(time.Millisecond),
		rep.Verify.Round(time.Millisecond), rep.ReadOnly.Round(time.Millisecond))
	if !dropSource {
		fmt.Fprintf(os.Stderr, "the source namespace in %s is kept (knowmind cell drop --tenant %s --from %s drops it); every serve of this data dir serves the tenant from %s at its next call\n",
			rep.From, tenant, rep.From, rep.To)
		return nil
	}
	if err := r.DropCopy(ctx, tenant, rep.From); err != nil {
		return fmt.Errorf("the move is done, the source is kept: %w", err)
	}
	fmt.Fprintf(os.Stderr, "the source namespace in %s is dropped; every serve of this data dir serves the tenant from %s\n", rep.From, rep.To)
	return nil
}

// dropCopy drops the namespace a move left in cell from.
func dropCopy(ctx context.Context, cfg Config, path, tenant, from string) error {
	return withRouter(ctx, cfg, path, "cell drop", from, func(r *cells.Router) error {
		if err := r.DropCopy(ctx, tenant, from); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "the copy of tenant %s in cell %s is dropped\n", tenant, from)
		return nil
	})
}

// withRouter runs fn with a router over every cell while holding the directory's lock, after
// checking that the cell the command names exists.
func withRouter(ctx context.Context, cfg Config, path, cmd, cell string, fn func(*cells.Router) error) error {
	unlock, err := lockDirectory(path)
	if err != nil {
		return err
	}
	defer unlock()
	d, err := cells.ReadDirectory(path)
	if err != nil {
		return err
	}
	if _, ok := d.Cells[cell]; !ok && cell != homeCell {
		return fmt.Errorf("%s: no cell %q (knowmind cell list)", cmd, cell)
	}
	r, closeAll, err := openRouter(ctx, cfg, path, d)
	if err != nil {
		return err
	}
	defer closeAll()
	return fn(r)
}

// openRouter opens every cell of the directory (home with its embedder: an import re-embeds
// what it writes, and home's embedder serves every cell) and a router over them.
func openRouter(ctx context.Context, cfg Config, path string, d cells.Directory) (_ *cells.Router, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for _, c := range slices.Backward(closers) {
			c()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	home, err := openBackend(ctx, cfg, newLogger(cfg.LogLevel), opening{embedder: true, bulk: true, noExactVectors: true})
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, home.Close)
	clients := map[string]*graph.Client{homeCell: home.client}
	for _, name := range d.CellNames() {
		c, err := openCell(ctx, cfg, d.Cells[name], home.shapes, home.embedder, false)
		if err != nil {
			return nil, nil, fmt.Errorf("cell %s: %w", name, err)
		}
		closers = append(closers, c.Close)
		clients[name] = c
	}
	r, err := cells.Open(clients, homeCell, path)
	if err != nil {
		return nil, nil, err
	}
	return r, closeAll, nil
}

// openServing is the cells' view a serving process (serve, stdio) reads tenants and verifies
// tokens through: home is b's cluster, every other cell is opened from the directory on first use.
func openServing(cfg Config, b *backend, log *slog.Logger) (*cells.Serving, error) {
	s, err := cells.OpenServing(b.client, filepath.Join(cfg.DataDir, cells.DirectoryFileName),
		func(ctx context.Context, name string, c cells.Cell) (*graph.Client, error) {
			log.Info("opening cell", "cell", name, "alphas", c.Dgraph)
			return openCell(ctx, cfg, c, b.shapes, b.embedder, true)
		}, log)
	if err != nil {
		return nil, fmt.Errorf("cell directory: %w", err)
	}
	return s, nil
}

// cellClient is the client of the named cell for a command: home's is b's (close does nothing),
// another is opened from the directory and closed by close.
func cellClient(ctx context.Context, cfg Config, b *backend, d cells.Directory, name string) (c *graph.Client, close func(), err error) {
	if name == homeCell {
		return b.client, func() {}, nil
	}
	entry, ok := d.Cells[name]
	if !ok {
		return nil, nil, fmt.Errorf("no cell %q in the cell directory (knowmind cell list)", name)
	}
	c, err = openCell(ctx, cfg, entry, b.shapes, nil, false)
	if err != nil {
		return nil, nil, fmt.Errorf("cell %s: %w", name, err)
	}
	return c, c.Close, nil
}

// placementOf is where the directory places tenant (home when it does not list it).
func placementOf(d cells.Directory, tenant string) cells.Placement {
	if p, ok := d.Tenants[tenant]; ok && p.Cell != "" {
		return p
	}
	return cells.Placement{Cell: homeCell}
}

// openTenant opens tenant in the cell the directory places it in, for a command (import,
// export, project, trash, purge): a command never reads or writes the copy a move left in
// another cell. A command that writes is refused while the tenant is being moved. close
// closes the cell's client when it is not home's.
func openTenant(ctx context.Context, cfg Config, b *backend, tenant string, create, writes bool) (*graph.Tenant, func(), error) {
	d, err := cells.ReadDirectory(filepath.Join(cfg.DataDir, cells.DirectoryFileName))
	if err != nil {
		return nil, nil, err
	}
	p := placementOf(d, tenant)
	if writes && p.ReadOnly {
		return nil, nil, errMoving(tenant)
	}
	c := b.client
	closeCell := func() {}
	if p.Cell != homeCell {
		entry, ok := d.Cells[p.Cell]
		if !ok {
			return nil, nil, fmt.Errorf("tenant %q is in cell %s, which the directory does not name", tenant, p.Cell)
		}
		if c, err = openCell(ctx, cfg, entry, b.shapes, b.embedder, false); err != nil {
			return nil, nil, fmt.Errorf("cell %s: %w", p.Cell, err)
		}
		closeCell = c.Close
	}
	t, err := c.Tenant(ctx, tenant, create)
	if err != nil {
		closeCell()
		return nil, nil, err
	}
	return t, closeCell, nil
}
