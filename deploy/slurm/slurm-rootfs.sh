#!/usr/bin/env bash
# slurm-rootfs.sh VERSION - a cached Debian root file system holding Slurm VERSION, for local-slurm.sh.
#
#   deploy/slurm/slurm-rootfs.sh 24.11    Debian 13 (trixie): Slurm 24.11
#   deploy/slurm/slurm-rootfs.sh 26.05    Debian unstable (sid): Slurm 26.05
#
# Prints the root's path. Built once per machine with debootstrap (minbase) and Debian's own
# packages (munge, slurmctld, slurmd, slurmdbd, slurm-client, slurmrestd, the MySQL and JWT
# plugins) from the mirror the host's apt sources name; later calls only check the stamp (a few
# ms). The cache lives outside any checkout: $FAIRPORTAL_SLURM_ROOTFS_CACHE, default
# /var/lib/fairportal/slurm-rootfs/<version>. Builds of one version are serialised by a lock, so
# two checkouts starting clusters at once build it once. Must run as root.
set -euo pipefail

VERSION="${1:-}"
CACHE="${FAIRPORTAL_SLURM_ROOTFS_CACHE:-/var/lib/fairportal/slurm-rootfs}"
TIMEOUT="${FAIRPORTAL_SLURM_BUILD_TIMEOUT:-1200}"
case "$VERSION" in
  24.11) SUITE=trixie; APT_OPTS=() ;;
  # sid's index on the mirror may be an old snapshot: its Valid-Until has passed
  26.05) SUITE=sid; APT_OPTS=(-o Acquire::Check-Valid-Until=false) ;;
  *) echo "slurm-rootfs: unknown version '$VERSION' (24.11 or 26.05; 22.05 is the host's own)" >&2; exit 2 ;;
esac
PACKAGES=(munge slurmctld slurmd slurmdbd slurm-client slurmrestd slurm-wlm-basic-plugins slurm-wlm-mysql-plugin slurm-wlm-jwt-plugin)
ROOT="$CACHE/$VERSION"
STAMP="$ROOT/.fairportal-rootfs"
WANT="$SUITE ${PACKAGES[*]}"

log() { printf '[slurm-rootfs %s] %s\n' "$VERSION" "$*" >&2; }
die() { log "ERROR: $*"; exit 1; }

ready() { [[ -f "$STAMP" && "$(head -1 "$STAMP")" == "$WANT" ]]; }
if ready; then echo "$ROOT"; exit 0; fi
[[ $(id -u) -eq 0 ]] || die "must run as root (debootstrap, chroot)"

mirror() { # the Debian mirror the host's apt sources use
  local uri
  uri="$(grep -rhoE '^(URIs:|deb)\s+\S+' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
    | awk '{print $2}' | grep -E '/debian/?$' | head -1 || true)"
  echo "${uri:-http://deb.debian.org/debian}"
}

mkdir -p "$CACHE"
exec 7>"$CACHE/.$VERSION.lock"
flock -w "$TIMEOUT" 7 || die "another build of $VERSION holds $CACHE/.$VERSION.lock"
if ready; then echo "$ROOT"; exit 0; fi  # built while we waited

BUILD="$CACHE/$VERSION.build"
command -v debootstrap >/dev/null || {
  log "installing debootstrap"
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends debootstrap >/dev/null \
    || { apt-get update -qq >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends debootstrap >/dev/null; }
}
unmount_all() { # every mount under a root, deepest first
  local m
  for m in $(awk -v r="$1/" 'index($2, r) == 1 {print $2}' /proc/mounts | sort -r); do umount -l "$m" 2>/dev/null || true; done
}
if [[ ! -f "$BUILD/.debootstrap-ok" ]]; then
  unmount_all "$BUILD"
  rm -rf --one-file-system "$BUILD"
  MIRROR="$(mirror)"
  log "debootstrap $SUITE from $MIRROR"
  timeout "$TIMEOUT" debootstrap --variant=minbase "$SUITE" "$BUILD" "$MIRROR" >"$CACHE/$VERSION.debootstrap.log" 2>&1 \
    || die "debootstrap failed (log $CACHE/$VERSION.debootstrap.log)"
  touch "$BUILD/.debootstrap-ok"
fi
# no service starts inside the root while packages are installed
printf '#!/bin/sh\nexit 101\n' >"$BUILD/usr/sbin/policy-rc.d"; chmod 755 "$BUILD/usr/sbin/policy-rc.d"
mountpoint -q "$BUILD/proc" || mount -t proc proc "$BUILD/proc"
trap 'unmount_all "$BUILD"' EXIT
log "installing ${PACKAGES[*]}"
export DEBIAN_FRONTEND=noninteractive
apt_in() { timeout "$TIMEOUT" chroot "$BUILD" apt-get "${APT_OPTS[@]}" -o Dpkg::Options::=--force-confold "$@"; }
{ apt_in update -qq && apt_in install -y -qq --no-install-recommends "${PACKAGES[@]}" && apt_in clean; } \
  >"$CACHE/$VERSION.apt.log" 2>&1 || { tail -20 "$CACHE/$VERSION.apt.log" >&2; die "apt-get in the root failed (log $CACHE/$VERSION.apt.log)"; }
unmount_all "$BUILD"
trap - EXIT
chroot "$BUILD" dpkg-query -W -f='${Package} ${Version}\n' slurmctld >"$CACHE/$VERSION.packages"
[[ -e "$ROOT" ]] && { unmount_all "$ROOT"; rm -rf --one-file-system "$ROOT"; }
mv "$BUILD" "$ROOT"
{ echo "$WANT"; cat "$CACHE/$VERSION.packages"; } >"$STAMP"
log "ready: $(cat "$CACHE/$VERSION.packages")"
echo "$ROOT"
