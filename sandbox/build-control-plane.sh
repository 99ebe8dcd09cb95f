#!/usr/bin/env bash
# Builds the sandbox's real Kubernetes control plane from Debian's packages:
#   kube-apiserver, kube-controller-manager and kube-scheduler v1.20.2 from Debian 12's
#   `kubernetes` source package; kubectl v1.20.2 from its binary package `kubernetes-client`
#   (unpacked into the cache, not installed: a machine may have another kubectl package); and
#   Debian's etcd-server (3.4).
#
#   sandbox/build-control-plane.sh            build (or reuse the cache), print the bin dir
#   sandbox/build-control-plane.sh --print-bin-dir   only print where the binaries go
#
# Idempotent: binaries are cached under ${KUBESLURM_CACHE:-$HOME/.cache/kubeslurm}/bin
# with a stamp file; a second run checks the stamp and does nothing else.
#
# Environment:
#   KUBESLURM_CACHE   cache root (default $HOME/.cache/kubeslurm)
#   KUBESLURM_JOBS    parallel compile jobs (default 2; the build machine is shared)
#   KUBESLURM_FORCE=1 rebuild even when the stamp matches
#
# Why each step is there (see docs/sandbox.md and FACTS.md):
#   * Debian ships the Kubernetes 1.20.2 sources with vendor/ but no server binaries.
#   * GOPATH mode (GO111MODULE=off) with the tree at $GOPATH/src/k8s.io/kubernetes is how
#     that tree builds offline with Go 1.19 (GOPROXY=off, CGO_ENABLED=0).
#   * The source package carries every generated file but one: pkg/generated/openapi's
#     zz_generated.openapi.go, which kube-apiserver needs. `make gen_openapi` (needs rsync) makes
#     it in ~20 s; `make generated_files` would also rewrite the 470 checked-in ones, identical
#     but for a `//go:build` line, at several minutes of both cores.
#   * One `go build` for the three servers: the packages they share compile once, and the
#     links overlap the compiles.
#   * The vendored modern-go/reflect2 and json-iterator/go crash kube-apiserver on the
#     first custom resource under Go >= 1.18; Debian's packaged 1.0.2 / 1.1.12 replace them.
set -euo pipefail

CACHE=${KUBESLURM_CACHE:-$HOME/.cache/kubeslurm}
BIN=$CACHE/bin
STAMP=$BIN/.stamp
JOBS=${KUBESLURM_JOBS:-2}

KUBE_VERSION=v1.20.2
GO_PKG=golang-1.19-go
GOROOT_DIR=/usr/lib/go-1.19
SERVERS=(kube-apiserver kube-controller-manager kube-scheduler)
BINARIES=("${SERVERS[@]}" kubectl)
# What the stamp records; change SCRIPT_REV when the build recipe changes.
SCRIPT_REV=2

PACKAGES=(
  dpkg-dev rsync make git ca-certificates openssl curl
  "$GO_PKG" etcd-server etcd-client
  golang-github-modern-go-reflect2-dev golang-github-json-iterator-go-dev
)
# Downloaded and unpacked into the cache, not installed.
KUBECTL_PKG=kubernetes-client

if [ "${1:-}" = "--print-bin-dir" ]; then
  echo "$BIN"
  exit 0
fi

log() { printf '[build-control-plane] %s\n' "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

T0=$(date +%s)
elapsed() { echo $(($(date +%s) - $1)); }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing_packages() {
  local p
  for p in "${PACKAGES[@]}"; do installed "$p" || echo "$p"; done
}

stamp_value() {
  # The inputs that decide what the binaries are.
  printf 'kubernetes=%s go=%s reflect2=%s json-iterator=%s kubectl=%s rev=%s\n' \
    "$KUBE_VERSION" \
    "$(dpkg-query -W -f='${Version}' "$GO_PKG" 2>/dev/null || echo none)" \
    "$(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev 2>/dev/null || echo none)" \
    "$(dpkg-query -W -f='${Version}' golang-github-json-iterator-go-dev 2>/dev/null || echo none)" \
    "$(apt-cache policy "$KUBECTL_PKG" 2>/dev/null | awk '/Candidate:/ {print $2}')" \
    "$SCRIPT_REV"
}

cached() {
  [ "${KUBESLURM_FORCE:-0}" = 1 ] && return 1
  [ -f "$STAMP" ] || return 1
  local b
  for b in "${BINARIES[@]}"; do [ -x "$BIN/$b" ] || return 1; done
  [ -z "$(missing_packages)" ] || return 1
  [ "$(cat "$STAMP")" = "$(stamp_value)" ]
}

if cached; then
  log "cached: $BIN ($(cat "$STAMP")) — nothing to do"
  echo "$BIN"
  exit 0
fi

# ---------------------------------------------------------------------------------------
# 1. deb-src for the same Debian archive the machine already uses.
# ---------------------------------------------------------------------------------------
DEBSRC_SOURCES=/etc/apt/sources.list.d/kubeslurm-deb-src.sources
DEBSRC_LIST=/etc/apt/sources.list.d/kubeslurm-deb-src.list

has_debian_deb_src() {
  # A Sources index target for a Debian archive URI is configured.
  # (Captured first: `grep -q` closing a pipe early would fail the pipeline under pipefail.)
  local targets
  targets=$(apt-get indextargets --format '$(CREATED_BY) $(REPO_URI)' 2>/dev/null || true)
  grep -E '^Sources ' <<< "$targets" | grep -iE '/debian/?$|debian\.org' > /dev/null
}

add_deb_src() {
  if has_debian_deb_src; then
    log "deb-src for the Debian archive is already configured"
    return 1
  fi
  local tmp
  tmp=$(mktemp -d)
  # deb822 files (Debian 12 default: /etc/apt/sources.list.d/debian.sources).
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    [ "$f" = "$DEBSRC_SOURCES" ] && continue
    awk '
      function flush() {
        if (n > 0 && isdeb && isdebian && enabled) {
          print "Types: deb-src"
          for (i = 1; i <= n; i++) print lines[i]
          print ""
        }
        n = 0; isdeb = 0; isdebian = 0; enabled = 1
      }
      BEGIN { n = 0; enabled = 1 }
      /^[[:space:]]*#/ { next }
      /^[[:space:]]*$/ { flush(); next }
      {
        if (tolower($1) == "types:") {
          for (i = 2; i <= NF; i++) if ($i == "deb") isdeb = 1
          next
        }
        if (tolower($1) == "enabled:" && tolower($2) == "no") enabled = 0
        if (tolower($1) == "uris:" && ($0 ~ /\/debian\/?([[:space:]]|$)/ || $0 ~ /debian\.org/)) isdebian = 1
        lines[++n] = $0
      }
      END { flush() }
    ' "$f" >> "$tmp/sources"
  done
  # One-line format (/etc/apt/sources.list and *.list).
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
    [ -f "$f" ] || continue
    [ "$f" = "$DEBSRC_LIST" ] && continue
    awk '/^[[:space:]]*deb[[:space:]]/ && ($0 ~ /debian\.org/ || $0 ~ /\/debian\/?[[:space:]]/) {
           sub(/^[[:space:]]*deb[[:space:]]/, "deb-src "); print }' "$f" >> "$tmp/list"
  done
  local added=1
  if [ -s "$tmp/sources" ]; then
    as_root install -m 0644 "$tmp/sources" "$DEBSRC_SOURCES"
    log "added $DEBSRC_SOURCES"
    added=0
  fi
  if [ -s "$tmp/list" ]; then
    as_root install -m 0644 "$tmp/list" "$DEBSRC_LIST"
    log "added $DEBSRC_LIST"
    added=0
  fi
  rm -rf "$tmp"
  [ $added -eq 0 ] || die "found no Debian archive in /etc/apt/sources.list{,.d/*} to add deb-src for"
  return 0
}

t=$(date +%s)
need_update=0
add_deb_src && need_update=1
mapfile -t missing < <(missing_packages)
[ ${#missing[@]} -gt 0 ] && need_update=1
if [ $need_update = 1 ] || ! apt-cache showsrc kubernetes >/dev/null 2>&1 ||
   ! apt-cache show "$KUBECTL_PKG" >/dev/null 2>&1; then
  log "apt-get update"
  as_root apt-get update -q >&2
fi
mapfile -t missing < <(missing_packages)
if [ ${#missing[@]} -gt 0 ]; then
  log "installing ${missing[*]}"
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    "${missing[@]}" >&2
fi
log "packages ready ($(elapsed "$t") s)"

# ---------------------------------------------------------------------------------------
# 2. The source tree, in GOPATH layout.
# ---------------------------------------------------------------------------------------
export GOPATH=$CACHE/gopath
TREE=$GOPATH/src/k8s.io/kubernetes
SRC_DL=$CACHE/src
export GOROOT=$GOROOT_DIR
export PATH=$GOROOT/bin:$PATH
export GO111MODULE=off GOPROXY=off CGO_ENABLED=0 GOTOOLCHAIN=local
unset GOFLAGS   # -mod=... is not valid in GOPATH mode
export GOCACHE=$CACHE/go-build
export GOMAXPROCS=$JOBS
export GOSUMDB=off
command -v go >/dev/null || die "go not found in $GOROOT/bin"

t=$(date +%s)
if [ ! -f "$TREE/.kubeslurm-prepared" ]; then
  rm -rf "$SRC_DL" "$TREE"
  mkdir -p "$SRC_DL" "$(dirname "$TREE")"
  log "apt-get source kubernetes"
  (cd "$SRC_DL" && apt-get source -q kubernetes >&2)
  srcdir=$(find "$SRC_DL" -maxdepth 1 -mindepth 1 -type d -name 'kubernetes-*' | head -n1)
  [ -n "$srcdir" ] || die "apt-get source kubernetes produced no kubernetes-* directory"
  mv "$srcdir" "$TREE"
  rm -rf "$SRC_DL"   # the .orig tarballs are not needed any more

  # Replace the vendored reflect2 and json-iterator with Debian's fixed versions.
  for pkg in github.com/modern-go/reflect2 github.com/json-iterator/go; do
    src=/usr/share/gocode/src/$pkg
    [ -d "$src" ] || die "$src missing (Debian package not installed?)"
    rm -rf "$TREE/vendor/$pkg"
    mkdir -p "$TREE/vendor/$pkg"
    # -L: Debian's gocode trees may hold symlinks; tests are not needed.
    cp -rL "$src/." "$TREE/vendor/$pkg/"
    find "$TREE/vendor/$pkg" -name '*_test.go' -delete
    rm -f "$TREE/vendor/$pkg/go.mod" "$TREE/vendor/$pkg/go.sum"
    log "vendored $pkg from $src"
  done
  touch "$TREE/.kubeslurm-prepared"
fi
log "source tree ready at $TREE ($(elapsed "$t") s)"

# ---------------------------------------------------------------------------------------
# 3. Generated files, then the binaries.
# ---------------------------------------------------------------------------------------
cd "$TREE"
t=$(date +%s)
if [ ! -f "$TREE/pkg/generated/openapi/zz_generated.openapi.go" ]; then
  log "make gen_openapi (GOMAXPROCS=$JOBS)"
  nice -n 10 make gen_openapi KUBE_VERBOSE=0 >&2
fi
log "generated files ready ($(elapsed "$t") s)"

# Version stamped the way hack/lib/version.sh does it, so /version says v1.20.2.
build_date=$(date -u +%Y-%m-%dT%H:%M:%SZ)
ldflags="-s -w"
for p in k8s.io/kubernetes/vendor/k8s.io/component-base/version \
         k8s.io/kubernetes/vendor/k8s.io/client-go/pkg/version; do
  ldflags+=" -X $p.gitVersion=$KUBE_VERSION -X $p.gitMajor=1 -X $p.gitMinor=20"
  ldflags+=" -X $p.gitCommit=debian-bookworm -X $p.gitTreeState=clean -X $p.buildDate=$build_date"
done

mkdir -p "$BIN"
rm -f "$STAMP"
t=$(date +%s)
staging=$BIN/.new
rm -rf "$staging"
mkdir -p "$staging"
log "go build ${SERVERS[*]} (-p $JOBS; several minutes of both cores)"
# A line every 30 s while it compiles: go build prints nothing until it is done.
# (The sleeps write nowhere, so none left behind holds a caller's pipe open.)
(
  trap 'kill "$nap" 2>/dev/null; exit 0' TERM
  while :; do
    sleep 30 > /dev/null 2>&1 < /dev/null &
    nap=$!
    wait "$nap"
    log "... go build, $(elapsed "$t") s"
  done
) &
ticker=$!
status=0
nice -n 10 go build -p "$JOBS" -trimpath -ldflags "$ldflags" -o "$staging/" \
  "${SERVERS[@]/#/./cmd/}" >&2 || status=$?
kill "$ticker" 2>/dev/null || true
wait "$ticker" 2>/dev/null || true
[ "$status" = 0 ] || die "go build failed (exit $status)"
for b in "${SERVERS[@]}"; do mv -f "$staging/$b" "$BIN/$b"; done
rm -rf "$staging"
log "built ${SERVERS[*]} in $(elapsed "$t") s"

# kubectl: Debian's build of the same release, unpacked from its package.
t=$(date +%s)
pkgdir=$(mktemp -d)
(cd "$pkgdir" && apt-get download -q "$KUBECTL_PKG" >&2) || die "apt-get download $KUBECTL_PKG failed"
dpkg-deb -x "$pkgdir"/"$KUBECTL_PKG"_*.deb "$pkgdir/root"
install -m 0755 "$pkgdir/root/usr/bin/kubectl" "$BIN/kubectl"
rm -rf "$pkgdir"
log "kubectl from $KUBECTL_PKG ($(elapsed "$t") s)"

# etcd from Debian (etcd-server); link it next to the others so the sandbox finds one dir.
ln -sf "$(command -v etcd || echo /usr/bin/etcd)" "$BIN/etcd"

"$BIN/kube-apiserver" --version >&2
"$BIN/kubectl" version --client --short >&2
stamp_value > "$STAMP"
log "done in $(elapsed "$T0") s total; binaries in $BIN"
echo "$BIN"
