#!/usr/bin/env bash
# The in-pod tool in images that are not ours: the step scenarios (step_scenarios.sh) inside a
# Debian 11 root filesystem (glibc 2.31, older than the 2.36 the tool is built with) and inside a
# busybox-only one (no C library at all), as uid 65532, with the tool where a rank pod has it
# (/kubeslurm/bin: kubeslurm-inpod and its srun and scontrol links) and nothing else of ours.
# srun reaches the agents by name (e2e-0, e2e-1 in the root's /etc/hosts), as it reaches a job's
# ranks by their DNS names.
#
#   inpod_rootfs_test.sh KUBESLURM_INPOD
#
# Needs root (chroot, mounts), debootstrap and busybox-static (./run deps installs both). The
# Debian 11 root is made once (debootstrap --variant=minbase bullseye, about a minute) and kept in
# ~/.cache/kubeslurm/rootfs; each run copies it.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOOL=$(realpath "$1")
WORK=$(mktemp -d "${TMPDIR:-/tmp}/kubeslurm-inpod-rootfs.XXXXXX")
MOUNTS=()
cleanup() {
  for mount in "${MOUNTS[@]}"; do umount -l "$mount" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT
step() { echo "=== $* [${SECONDS}s]" >&2; }
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*" >&2; exit 77; }

[ "$(id -u)" = 0 ] || skip "chroot needs root"
command -v debootstrap >/dev/null || fail "no debootstrap (./run deps installs it)"
BUSYBOX=$(command -v busybox) || fail "no busybox (apt-get install busybox-static; ./run deps)"
# Both must need nothing from the root they run in.
for binary in "$TOOL" "$BUSYBOX"; do
  ! readelf -l "$binary" | grep -q 'program interpreter' || fail "$binary is not static"
done
echo "kubeslurm-inpod: $(stat -c %s "$TOOL") bytes ($(strip -o "$WORK/stripped" "$TOOL" &&
  stat -c %s "$WORK/stripped") stripped)" >&2

# Puts the tool and the scenarios into a root, as a rank pod's init container and volume do.
install_tool() {
  local root=$1
  mkdir -p "$root/kubeslurm/bin" "$root/t" "$root/tmp" "$root/proc" "$root/dev" "$root/etc"
  chmod 1777 "$root/tmp"
  inpod_tools "$TOOL" "$root/kubeslurm/bin"
  cp "$HERE/step_scenarios.sh" "$root/t/"
  printf '127.0.0.1\tlocalhost e2e-0 e2e-1\n' >"$root/etc/hosts"
  [ -e "$root/dev/null" ] || mknod -m 666 "$root/dev/null" c 1 3
  mount -t proc proc "$root/proc"
  MOUNTS+=("$root/proc")
}

# shellcheck source=tests/support/free_port.sh
. "$HERE/../support/free_port.sh"
# shellcheck source=tests/support/inpod_tools.sh
. "$HERE/../support/inpod_tools.sh"
CHROOT=$(command -v chroot)
run_scenarios() {
  local root=$1 p0 p1
  p0=$(free_port)
  p1=$(free_port)
  while [ "$p1" = "$p0" ]; do p1=$(free_port); done
  env -i PATH=/usr/bin:/bin HOME=/tmp P0="$p0" P1="$p1" AGENT_HOST0=e2e-0 AGENT_HOST1=e2e-1 \
    "$CHROOT" --userspec=65532:65532 "$root" /bin/sh /t/step_scenarios.sh /kubeslurm/bin
}

step "a Debian 11 root filesystem (glibc 2.31; debootstrap once into ~/.cache/kubeslurm/rootfs)"
# shellcheck source=tests/support/debian_root.sh
. "$HERE/../support/debian_root.sh"
debian_root bullseye "$WORK/bullseye"
ls "$WORK/bullseye"/lib/x86_64-linux-gnu/libc-2.31.so >/dev/null || fail "the root's glibc is not 2.31"
install_tool "$WORK/bullseye"
step "the step scenarios in Debian 11, as uid 65532"
run_scenarios "$WORK/bullseye" || fail "the step scenarios failed in Debian 11"

step "a busybox-only root filesystem (no C library)"
BOX=$WORK/busybox
mkdir -p "$BOX/bin"
cp "$BUSYBOX" "$BOX/bin/busybox"
for applet in $("$BUSYBOX" --list); do
  [ "$applet" = busybox ] || ln -s busybox "$BOX/bin/$applet"
done
[ -z "$(find "$BOX" -name 'libc.so*' -o -name 'ld-linux*' -o -name 'libc.musl*')" ] ||
  fail "the busybox root has a C library"
install_tool "$BOX"
step "the step scenarios in busybox, as uid 65532"
run_scenarios "$BOX" || fail "the step scenarios failed in the busybox root"
step "PASS: the in-pod tool runs in Debian 11 and in busybox"
