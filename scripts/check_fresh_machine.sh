#!/usr/bin/env bash
# Runs the README's two commands on a fresh Debian 12 (bookworm) of this
# machine's kind: a debootstrap chroot holding only what such a machine has
# (g++, cmake, make, git, npm, python3; no OpenBLAS, no GoogleTest, no nvcc),
# into which the committed HEAD is cloned. Proves that scripts/run.sh and
# scripts/test.sh install everything they need. Not part of CI (it builds
# everything twice and runs the whole suite); run it before changing set-up.
#
# Usage: scripts/check_fresh_machine.sh [--keep] [--image-only] [--main-args "ARGS"]
#   --keep        leave the chroot in place afterwards (its path is printed)
#   --image-only  build the cached base image if it is missing, then stop
#   --main-args   arguments for scripts/run.sh (default "--epochs 1")
# Environment: ATTN_FRESH_CACHE (default ~/.cache/attn/fresh-machine) holds
# the base image, built once; ATTN_DEBIAN_MIRROR (default: the first
# deb.debian.org-style URI in this machine's apt sources).
#
# Output: one line per command, "<command>: exit <status>, <seconds> s", and
# the logs' paths. Exit status 0 only if both commands succeeded.
set -euo pipefail

keep=0
image_only=0
main_args="--epochs 1"
while [ $# -gt 0 ]; do
  case "$1" in
    --keep) keep=1; shift ;;
    --image-only) image_only=1; shift ;;
    --main-args)
      [ $# -ge 2 ] || { echo "check_fresh_machine: --main-args needs a value" >&2; exit 2; }
      main_args=$2; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "check_fresh_machine: unknown argument '$1' (try --help)" >&2; exit 2 ;;
  esac
done

if [ "$(id -u)" -ne 0 ]; then
  echo "check_fresh_machine: needs root (debootstrap, chroot, mount); run it with sudo" >&2
  exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  echo "check_fresh_machine: installing debootstrap" >&2
  apt-get install -y debootstrap >/dev/null || { apt-get update >/dev/null && apt-get install -y debootstrap >/dev/null; }
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
head=$(git -C "$repo" rev-parse HEAD)
cache=${ATTN_FRESH_CACHE:-$HOME/.cache/attn/fresh-machine}
mirror=${ATTN_DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(grep -rhoE 'https?://[^ ]*/debian/?( |$)' /etc/apt/sources.list /etc/apt/sources.list.d/ 2>/dev/null \
           | head -n1 | tr -d ' ' || true)
  mirror=${mirror:-http://deb.debian.org/debian}
fi
# What a new machine of this kind has, per the issue: the build tools and npm,
# nothing the project itself needs beyond them.
base_packages=g++,cmake,make,git,npm,python3,ca-certificates
base_image=$cache/bookworm-base.tar
mkdir -p "$cache"

# Mounts /proc, /sys, /dev and /dev/pts into the chroot at $1 (recorded in
# `mounted` for cleanup) and gives it this machine's resolver.
mounted=()
mount_system_dirs() {
  local fs
  for fs in proc sys dev dev/pts; do
    mkdir -p "$1/$fs"
    case $fs in
      proc) mount -t proc proc "$1/proc" ;;
      sys) mount -t sysfs sys "$1/sys" ;;
      *) mount --bind "/$fs" "$1/$fs" ;;
    esac
    mounted+=("$1/$fs")
  done
  cp /etc/resolv.conf "$1/etc/resolv.conf"
}
unmount_system_dirs() {
  local i
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
  mounted=()
}

if [ ! -f "$base_image" ]; then
  echo "check_fresh_machine: building the base image once (debootstrap bookworm from $mirror; several minutes)" >&2
  stage=$(mktemp -d "$cache/stage.XXXXXX")
  trap 'unmount_system_dirs; rm -rf --one-file-system "$stage"' EXIT
  if ! debootstrap --variant=minbase bookworm "$stage" "$mirror" >"$cache/debootstrap.log" 2>&1; then
    echo "check_fresh_machine: debootstrap failed; see $cache/debootstrap.log" >&2
    exit 1
  fi
  # The tools a new machine of this kind has, installed as its owner would
  # (some packages' scripts need /proc, which debootstrap's --include lacks).
  mount_system_dirs "$stage"
  if ! { chroot "$stage" apt-get update &&
         chroot "$stage" /usr/bin/env DEBIAN_FRONTEND=noninteractive \
           apt-get install -y ${base_packages//,/ }; } >>"$cache/debootstrap.log" 2>&1; then
    echo "check_fresh_machine: installing the base packages failed; see $cache/debootstrap.log" >&2
    exit 1
  fi
  unmount_system_dirs
  # The package lists stay, as on a machine that has run apt-get update once.
  tar -C "$stage" -cf "$base_image.tmp.$$" .
  mv "$base_image.tmp.$$" "$base_image"
  rm -rf --one-file-system "$stage"
  trap - EXIT
fi
if [ "$image_only" -eq 1 ]; then
  echo "check_fresh_machine: base image at $base_image"
  exit 0
fi

root=$(mktemp -d /var/tmp/attn-fresh.XXXXXX)
cleanup() {
  unmount_system_dirs
  if [ "$keep" -eq 1 ]; then
    echo "check_fresh_machine: chroot kept at $root" >&2
  else
    rm -rf --one-file-system "$root"
  fi
}
trap cleanup EXIT
tar -C "$root" -xf "$base_image"
mount_system_dirs "$root"
# The network is the machine's, not the software's: a new machine of this kind
# trusts this workplace's egress certificate authorities (in
# /usr/local/share/ca-certificates) and points npm at the system bundle, as
# this one does. Without them every HTTPS download in the chroot fails.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
  cp /usr/local/share/ca-certificates/*.crt "$root/usr/local/share/ca-certificates/"
  chroot "$root" update-ca-certificates >/dev/null 2>&1
fi
echo "cafile=/etc/ssl/certs/ca-certificates.crt" >"$root/etc/npmrc"

# The committed HEAD only: uncommitted changes must not make the check pass.
git clone --quiet --no-local "$repo" "$root/root/attn"
git -C "$root/root/attn" checkout --quiet "$head"
echo "check_fresh_machine: HEAD $head in $root" >&2

logs=$cache/logs-$(date +%Y%m%d-%H%M%S)
mkdir -p "$logs"
status=0
run_in_chroot() {
  local name=$1 command=$2 start end rc
  start=$(date +%s)
  set +e
  chroot "$root" /usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    LANG=C.UTF-8 /bin/bash -c "cd /root/attn && $command" >"$logs/$name.log" 2>&1
  rc=$?
  set -e
  end=$(date +%s)
  echo "$command: exit $rc, $((end - start)) s (log: $logs/$name.log)"
  [ "$rc" -eq 0 ] || status=1
}
run_in_chroot main "scripts/run.sh $main_args"
run_in_chroot tests "scripts/test.sh"
exit "$status"
