package cells

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
)

// DirectoryFileName is the directory's file in a service's data dir.
const DirectoryFileName = "cells.json"

// maxDirectoryBytes bounds the file read: a directory of a million tenants is ~60 MB.
const maxDirectoryBytes = 256 << 20

// Directory is the cell directory as kept in its file: how to reach each cell other than home,
// and each tenant not in home with its mark. The file holds no secret, only the paths of the
// files that do.
type Directory struct {
	Cells   map[string]Cell      `json:"cells"`
	Tenants map[string]Placement `json:"tenants"`
}

// Cell is how to reach a cell's Dgraph cluster and open its tenants: the alphas, the guardian
// login, and the service secret its tenants' namespace passwords are derived from.
type Cell struct {
	Dgraph       []string `json:"dgraph"`
	DgraphHTTP   []string `json:"dgraph_http,omitempty"`
	User         string   `json:"user,omitempty"`
	PasswordFile string   `json:"password_file"`
	SecretFile   string   `json:"secret_file"`
}

// CellNames are the directory's cells, sorted.
func (d Directory) CellNames() []string {
	names := make([]string, 0, len(d.Cells))
	for n := range d.Cells {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// ReadDirectory reads the directory at path; a missing file is an empty directory.
func ReadDirectory(path string) (Directory, error) {
	d := Directory{Cells: map[string]Cell{}, Tenants: map[string]Placement{}}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return d, nil
	}
	if err != nil {
		return d, err
	}
	defer f.Close()
	if st, err := f.Stat(); err != nil {
		return d, err
	} else if st.Size() > maxDirectoryBytes {
		return d, fmt.Errorf("cell directory %s: %d bytes, more than %d", path, st.Size(), maxDirectoryBytes)
	}
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		return d, fmt.Errorf("cell directory %s: %w", path, err)
	}
	if d.Cells == nil {
		d.Cells = map[string]Cell{}
	}
	if d.Tenants == nil {
		d.Tenants = map[string]Placement{}
	}
	return d, nil
}

// UpdateDirectory changes the directory at path with change and writes it back whole: a
// temporary file, fsync, rename, fsync of the folder, so that a crash leaves the old directory
// or the new one. Callers that may run at once (two commands) serialise themselves; a router
// writes under its own lock.
func UpdateDirectory(path string, change func(*Directory) error) error {
	d, err := ReadDirectory(path)
	if err != nil {
		return err
	}
	if err := change(&d); err != nil {
		return err
	}
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".cells-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	folder, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer folder.Close()
	return folder.Sync()
}

func updateDirectory(path string, change func(*Directory)) error {
	return UpdateDirectory(path, func(d *Directory) error { change(d); return nil })
}
