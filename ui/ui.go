// Package ui is the graph explorer served at /ui: one static page, its
// script and stylesheet, and cytoscape.js vendored from npm (make ui-vendor;
// assets/vendor/VERSIONS records version, licence and checksum). Everything
// is embedded in the binary, so `make run` needs no build step and the page
// loads nothing from elsewhere.
//
// The page holds no privileges of its own: it signs in with a kmt_ token
// (kept in sessionStorage), and everything it shows comes from the MCP
// endpoint's tools with that token, so scopes and tenants hold as for any
// agent. It knows nothing of Dgraph or of the service's internals; this
// package only serves files, with a strict Content-Security-Policy.
package ui

import (
	"embed"
	"io/fs"
	"net/http"
	"strings"
)

//go:embed assets
var assets embed.FS

// Path is where the explorer is served.
const Path = "/ui"

// ContentSecurityPolicy allows only the page's own script, style and API
// calls: no inline code, no other origin, no framing.
const ContentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"font-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the explorer: Path itself is the page, Path/<file> its
// assets. Every answer carries the security headers.
func Handler() http.Handler {
	root, err := fs.Sub(assets, "assets")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	files := http.StripPrefix(Path+"/", http.FileServerFS(root))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", ContentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cache-Control", "no-cache")
		switch {
		case r.URL.Path == Path || r.URL.Path == Path+"/" || r.URL.Path == Path+"/index.html":
			page, err := fs.ReadFile(root, "index.html")
			if err != nil {
				http.Error(w, "explorer page missing", http.StatusInternalServerError)
				return
			}
			h.Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		case strings.HasPrefix(r.URL.Path, Path+"/") && !strings.HasSuffix(r.URL.Path, "/"): // files, no listings
			files.ServeHTTP(w, r)
		default:
			http.NotFound(w, r)
		}
	})
}
