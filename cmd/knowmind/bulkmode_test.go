package main

import "testing"

// Only commands that open with bulk (import) start the managed Dgraph in bulk-load mode; serve's
// settings pass through unchanged either way.
func TestManagedConfigBulkMode(t *testing.T) {
	cfg := Config{DgraphCacheMB: 512, DgraphMemLimitMB: 3072, DgraphGOGC: 50, DgraphPortOffset: 100}
	serve := managedConfig(cfg, "/d", "/acl", "/key", nil, opening{embedder: true})
	imp := managedConfig(cfg, "/d", "/acl", "/key", nil, opening{embedder: true, noExactVectors: true, bulk: true})
	if serve.CacheRemoveOnUpdate {
		t.Error("serve's managed Dgraph runs with remove-on-update")
	}
	if !imp.CacheRemoveOnUpdate {
		t.Error("import's managed Dgraph runs without remove-on-update (bulk-load mode)")
	}
	for _, c := range []struct {
		name string
		got  int
	}{{"serve cache", serve.CacheMB}, {"import cache", imp.CacheMB}} {
		if c.got != 512 {
			t.Errorf("%s = %d MB, want serve's 512", c.name, c.got)
		}
	}
	if imp.DataDir != "/d" || imp.PortOffset != 100 || imp.EncryptionKeyFile != "/key" || imp.ACLSecretFile != "/acl" ||
		imp.MemLimitMB != 3072 || imp.GCPercent != 50 || serve.MemLimitMB != 3072 || serve.GCPercent != 50 {
		t.Errorf("import's managed config lost serve's settings: %+v", imp)
	}
}
