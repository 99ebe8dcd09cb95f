#!/usr/bin/env bash
# The CLI's Debian package (cmake/Packaging.cmake) installed as a researcher's login host would
# install it: `apt-get install ./kubeslurm-client_*.deb` into a clean Debian 12 root filesystem
# (debootstrap --variant=minbase bookworm, made once and kept in the cache), which pulls the
# libraries the package depends on from Debian's archive; then, inside that root (chroot), the
# installed sbatch, squeue and sinfo run against the sandbox's API server on 127.0.0.1 with the
# sandbox's kubeconfig. Needs root (chroot) and Debian's archive, as ./run deps does; about
# 30 s, plus about a minute for the first debootstrap.
#
#   tests/integration/package_test.sh BUILD_DIR     KEEP=1 keeps the root filesystem and sandbox
# Env: KUBESLURM_BIN_DIR (control-plane binaries; default: sandbox/build-control-plane.sh),
#      KUBESLURM_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=$(cd "${1:?usage: package_test.sh BUILD_DIR}" && pwd)
SANDBOX=$ROOT/sandbox/sandbox
CACHE=${KUBESLURM_CACHE:-$HOME/.cache/kubeslurm}
MIRROR=${KUBESLURM_DEBIAN_MIRROR:-http://deb.debian.org/debian}

START=$SECONDS
step() { printf '\n--- [%3ss] %s\n' $((SECONDS - START)) "$*" >&2; }
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || fail "installing into a root filesystem needs root (chroot)"
command -v debootstrap >/dev/null ||
  fail "no debootstrap (apt-get install debootstrap; ./run deps installs it)"
command -v cpack >/dev/null || fail "no cpack (Debian's cmake)"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-package-test.XXXXXX")
ROOTFS=$WORK/rootfs
DIR=$WORK/sandbox
# shellcheck disable=SC2317  # run by the EXIT trap
finish() {
  local rc=$?
  trap - EXIT
  if mountpoint -q "$ROOTFS/proc" 2>/dev/null; then umount "$ROOTFS/proc" || true; fi
  if [ -d "$DIR" ] && [ "${KEEP:-0}" != 1 ]; then
    "$SANDBOX" down --purge --dir "$DIR" >/dev/null 2>&1 || true
  fi
  if [ "${KEEP:-0}" = 1 ]; then echo "kept $WORK" >&2; else rm -rf "$WORK"; fi
  if [ "$rc" -eq 0 ]; then echo "PASS: package test ($((SECONDS - START)) s)" >&2; fi
  exit "$rc"
}
trap finish EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

step "the package (cpack -G DEB in $BUILD)"
cmake --build "$BUILD" --target kubeslurm >&2
(cd "$BUILD" && rm -f kubeslurm-client_*.deb && cpack -G DEB >&2)
DEB=$(ls "$BUILD"/kubeslurm-client_*.deb)
info=$(dpkg-deb -I "$DEB")
grep -q '^ Package: kubeslurm-client$' <<<"$info" || fail "the package is not kubeslurm-client"
grep -q '^ Conflicts: slurm-client$' <<<"$info" || fail "the package must conflict with slurm-client"
grep -q '^ Depends: .*libcpprest' <<<"$info" || fail "no shared-library Depends: $info"
listing=$(dpkg-deb -c "$DEB")
for cmd in kubeslurm sbatch squeue scancel sinfo sacct sacctmgr sreport scontrol sprio sshare sdiag srun salloc sattach; do
  grep -q " ./usr/bin/$cmd\\( \\|$\\)" <<<"$listing" || fail "the package has no /usr/bin/$cmd"
done
echo "$(basename "$DEB"): $(stat -c %s "$DEB") bytes" >&2

step "a clean Debian 12 root filesystem (debootstrap once into $CACHE/rootfs)"
# shellcheck source=tests/support/debian_root.sh
. "$ROOT/tests/support/debian_root.sh"
debian_root bookworm "$ROOTFS"
[ ! -e "$ROOTFS/usr/bin/sbatch" ] || fail "the base root filesystem already has an sbatch"
cp /etc/resolv.conf "$ROOTFS/etc/resolv.conf"
mount -t proc proc "$ROOTFS/proc"
in_root() { chroot "$ROOTFS" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root "$@"; }

step "apt-get install ./$(basename "$DEB") (its dependencies from $MIRROR)"
cp "$DEB" "$ROOTFS/tmp/"
echo "deb $MIRROR bookworm main" >"$ROOTFS/etc/apt/sources.list"
in_root apt-get -q update >&2
in_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
  "/tmp/$(basename "$DEB")" >&2
in_root dpkg -s kubeslurm-client | grep -q '^Status: install ok installed' ||
  fail "dpkg does not list kubeslurm-client as installed"

step "sbatch --version, as installed"
version=$(in_root sbatch --version)
[ "$version" = "slurm 22.05.8" ] || fail "sbatch --version printed '$version'"
[ "$(in_root kubeslurm --version)" = "kubeslurm 0.1.0 (compatible with slurm 22.05)" ] ||
  fail "kubeslurm --version"

step "the sandbox, with the CRDs and one Partition"
if [ -z "${KUBESLURM_BIN_DIR:-}" ]; then
  KUBESLURM_BIN_DIR=$("$ROOT/sandbox/build-control-plane.sh" | tail -n1)
  export KUBESLURM_BIN_DIR
fi
"$SANDBOX" up --dir "$DIR" --nodes 2x8 --nodesim-binary "$BUILD/bin/kubeslurm-nodesim" >&2
eval "$("$SANDBOX" env --dir "$DIR")"
k() { "$KUBESLURM_BIN_DIR/kubectl" --request-timeout=20s "$@"; }
k apply -f "$ROOT/crds/" >&2
k wait --for condition=established --timeout=60s crd/slurmjobs.kubeslurm.io \
  crd/partitions.kubeslurm.io >&2
k apply -f - >&2 <<'EOF'
apiVersion: kubeslurm.io/v1alpha1
kind: Partition
metadata:
  name: debug
spec:
  nodes: gpu-[001-002]
  default: true
  maxTime: "1:00:00"
EOF
# The kubeconfig names its certificates by absolute path: the same paths inside the root.
mkdir -p "$ROOTFS$DIR"
cp -a "$DIR/kubeconfig" "$DIR/pki" "$ROOTFS$DIR/"

step "squeue and sinfo inside the root, against the sandbox"
out=$(in_root env KUBECONFIG="$DIR/kubeconfig" squeue)
[ "$out" = "             JOBID PARTITION     NAME     USER ST       TIME  NODES NODELIST(REASON)" ] ||
  fail "squeue printed: $out"
out=$(in_root env KUBECONFIG="$DIR/kubeconfig" sinfo)
grep -q '^debug\* *up *1:00:00 *2 *idle gpu-\[001-002\]$' <<<"$out" || fail "sinfo printed: $out"
# Not reaching the cluster is Slurm's error and rc 1, not a crash.
if out=$(in_root env KUBECONFIG=/nonexistent squeue 2>&1); then fail "squeue without a cluster: rc 0"; fi
echo "$out" | grep -q '^squeue: error: ' || fail "squeue without a cluster printed: $out"
