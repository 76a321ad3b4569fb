#!/usr/bin/env bash
# Vendors cytoscape.js for the explorer (make ui-vendor): the minified build,
# its licence and the exact version and checksum, fetched by npm pack with the
# machine's npm configuration.
# Usage: ui/vendor.sh 3.35.0
set -euo pipefail
version=${1:?usage: ui/vendor.sh VERSION}
dest=$(cd "$(dirname "$0")" && pwd)/assets/vendor
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "cytoscape@$version" >/dev/null && tar xzf "cytoscape-$version.tgz")
cp "$tmp/package/dist/cytoscape.min.js" "$dest/cytoscape.min.js"
cp "$tmp/package/LICENSE" "$dest/cytoscape.LICENSE"
cat >"$dest/VERSIONS" <<END
# Vendored by 'make ui-vendor' (ui/vendor.sh); do not edit by hand.
cytoscape $version MIT npm package cytoscape
sha256 $(sha256sum "$dest/cytoscape.min.js" | cut -d' ' -f1)  cytoscape.min.js
END
echo "vendored cytoscape $version into $dest"
