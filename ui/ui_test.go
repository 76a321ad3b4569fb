package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		path   string
		status int
		ctype  string
	}{
		{"/ui", 200, "text/html; charset=utf-8"},
		{"/ui/", 200, "text/html; charset=utf-8"},
		{"/ui/app.js", 200, "text/javascript; charset=utf-8"},
		{"/ui/vendor/cytoscape.min.js", 200, "text/javascript; charset=utf-8"},
		{"/ui/vendor/", 404, ""},
		{"/ui/vendor", 301, ""}, // the file server's redirect to the (unlisted) folder
		{"/ui/../ui.go", 404, ""},
		{"/ui/nothing", 404, ""},
	} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
		if rec.Code != tc.status || (tc.ctype != "" && rec.Header().Get("Content-Type") != tc.ctype) {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, rec.Code, rec.Header().Get("Content-Type"), tc.status, tc.ctype)
		}
		if rec.Header().Get("Content-Security-Policy") != ContentSecurityPolicy {
			t.Errorf("GET %s: no CSP", tc.path)
		}
	}
}

// The vendored cytoscape.js is the one VERSIONS records (make ui-vendor
// writes both), and its licence travels with it.
func TestVendoredVersionsMatch(t *testing.T) {
	versions, err := fs.ReadFile(assets, "assets/vendor/VERSIONS")
	if err != nil {
		t.Fatal(err)
	}
	js, err := fs.ReadFile(assets, "assets/vendor/cytoscape.min.js")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(js)
	if !strings.Contains(string(versions), "sha256 "+hex.EncodeToString(sum[:])+"  cytoscape.min.js") {
		t.Fatalf("VERSIONS does not record the embedded cytoscape.min.js (sha256 %x):\n%s", sum, versions)
	}
	licence, err := fs.ReadFile(assets, "assets/vendor/cytoscape.LICENSE")
	if err != nil || !strings.Contains(string(licence), "Permission is hereby granted") {
		t.Fatalf("cytoscape's MIT licence missing: %v", err)
	}
	page, _ := fs.ReadFile(assets, "assets/index.html")
	if !strings.Contains(string(page), `id="__________cytoscape_stylesheet"`) {
		t.Fatal("index.html must carry the id that stops cytoscape injecting an inline <style> (the CSP forbids it)")
	}
}
