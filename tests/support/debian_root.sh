# shellcheck shell=bash
# Sourced by the tests that run something inside a clean Debian root filesystem.
# debian_root SUITE DEST: copies a minimal root filesystem of Debian SUITE (bookworm, bullseye)
# to DEST. The root is made once (debootstrap --variant=minbase from $KUBESLURM_DEBIAN_MIRROR,
# about a minute) and kept in ${KUBESLURM_CACHE:-~/.cache/kubeslurm}/rootfs/SUITE-minbase.
debian_root() {
  local suite=$1 dest=$2
  local base=${KUBESLURM_CACHE:-$HOME/.cache/kubeslurm}/rootfs/$suite-minbase
  if [ ! -x "$base/usr/bin/apt-get" ]; then
    rm -rf "$base.partial"
    mkdir -p "$(dirname "$base")"
    debootstrap --variant=minbase "$suite" "$base.partial" \
      "${KUBESLURM_DEBIAN_MIRROR:-http://deb.debian.org/debian}" >&2
    mv "$base.partial" "$base"
  fi
  cp -a "$base" "$dest"
}
