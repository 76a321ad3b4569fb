#!/usr/bin/env bash
# Builds the local images the docker stack tests run (no registry needed):
#   knowmind-test/debian:bookworm  mmdebstrap minbase + curl, `docker import`ed
#                                  (tarball cached in bin/dockertest/)
#   knowmind-test/dgraph:v25.2.0   that base + bin/dgraph (Dockerfile.dgraph)
#   knowmind-test/knowmind:local   FROM scratch + a static knowmind and the host's word lists (Dockerfile.knowmind)
#   knowmind-test/lb:local         that base + HAProxy from Debian (deploy/lb/Dockerfile)
# Usage (repository root, Docker engine running): deploy/dockertest/mkimages.sh
# DGRAPH_BIN overrides bin/dgraph. Prints how long each step took.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
dgraph_bin=${DGRAPH_BIN:-$root/bin/dgraph}
work=$root/bin/dockertest
mkdir -p "$work"
export DOCKER_BUILDKIT=0 # the classic builder: no buildx plugin, no registry

# docker build, quiet unless it fails (the classic builder warns that it is deprecated).
build() {
	local log
	log=$(mktemp)
	if ! docker build -q "$@" >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		return 1
	fi
	rm -f "$log"
}

step() { printf 'mkimages: %-28s %4ds\n' "$1" $(( $(date +%s) - $2 )); }

# The version the compose files pin must be the binary we put in the image.
pin=$(sed -n 's/^x-dgraph-image: &dgraph-image dgraph\/dgraph:\(v[0-9.]*\)$/\1/p' docker-compose.yml)
[ -n "$pin" ] || { echo "mkimages: no dgraph/dgraph pin in docker-compose.yml" >&2; exit 1; }
grep -q "dgraph/dgraph:$pin\$" deploy/compose.cluster.yml || { echo "mkimages: compose.cluster.yml pins another Dgraph than docker-compose.yml ($pin)" >&2; exit 1; }
# (`dgraph version` says "dev" for a go build; the module version is in the binary.)
have=$(go version -m "$dgraph_bin" | awk '$1 == "mod" && $2 == "github.com/dgraph-io/dgraph/v25" { print $3 }')
[ "$have" = "$pin" ] || { echo "mkimages: $dgraph_bin is Dgraph '$have', the compose files pin $pin" >&2; exit 1; }

t=$(date +%s)
if ! docker image inspect knowmind-test/debian:bookworm >/dev/null 2>&1; then
	tar=$work/debian-bookworm-minbase.tar
	if [ ! -s "$tar" ]; then
		command -v mmdebstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq mmdebstrap >/dev/null; }
		# The machine's own apt sources (mmdebstrap reads a .list or .sources file given as the
		# mirror), so the image comes from wherever this machine's apt is set to fetch.
		sources=()
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
			[ -s "$f" ] && sources+=("$f")
		done
		[ ${#sources[@]} -gt 0 ] || { echo "mkimages: no apt sources on this machine (/etc/apt/sources.list*)" >&2; exit 1; }
		mmdebstrap --quiet --variant=minbase --include=curl,ca-certificates \
			--aptopt='Acquire::Retries "3"' \
			--customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
			bookworm "${tar%.tar}.partial.tar" "${sources[@]}"
		mv "${tar%.tar}.partial.tar" "$tar"
	fi
	docker import --change 'CMD ["/bin/sh"]' "$tar" knowmind-test/debian:bookworm >/dev/null
fi
step "base image (debian)" "$t"

t=$(date +%s)
ctx=$work/dgraph-ctx
rm -rf "$ctx" && mkdir -p "$ctx"
cp "$dgraph_bin" "$ctx/dgraph"
build -f deploy/dockertest/Dockerfile.dgraph -t "knowmind-test/dgraph:$pin" "$ctx"
step "dgraph image ($pin)" "$t"

t=$(date +%s)
ctx=$work/knowmind-ctx
rm -rf "$ctx" && mkdir -p "$ctx/data" "$ctx/dict/scowl"
# The word lists deploy/Dockerfile installs from Debian, taken from this host where it has them.
[ -s /usr/share/dict/ngerman ] && cp /usr/share/dict/ngerman "$ctx/dict/"
compgen -G '/usr/share/dict/scowl/*.[1-7][0-9]' >/dev/null && cp /usr/share/dict/scowl/*.[1-7][0-9] "$ctx/dict/scowl/"
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$ctx/knowmind" ./cmd/knowmind
step "knowmind binary (static)" "$t"
t=$(date +%s)
build -f deploy/dockertest/Dockerfile.knowmind -t knowmind-test/knowmind:local "$ctx"
step "knowmind image" "$t"

# The load balancer of compose.cluster.yml from its own Dockerfile, on the base above: HAProxy
# comes from Debian's packages through the machine's apt sources the base carries.
t=$(date +%s)
build --build-arg BASE=knowmind-test/debian:bookworm -t knowmind-test/lb:local deploy/lb
step "load balancer image (haproxy)" "$t"
