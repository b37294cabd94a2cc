#!/usr/bin/env bash
# Shared by scripts/run.sh and scripts/test.sh: installs what a fresh Debian
# machine lacks (as root) or prints the exact command (otherwise), then
# configures and builds into the folder given as $1 with the CMake options
# that follow.
set -euo pipefail

ATTN_PACKAGES=(cmake g++ make pkg-config libopenblas-dev libgtest-dev)

attn_missing_packages() {
  local missing=()
  command -v cmake >/dev/null 2>&1 || missing+=(cmake)
  command -v g++ >/dev/null 2>&1 || missing+=(g++)
  command -v make >/dev/null 2>&1 || missing+=(make)
  command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
  pkg-config --exists openblas 2>/dev/null || missing+=(libopenblas-dev)
  [ -f /usr/include/gtest/gtest.h ] || missing+=(libgtest-dev)
  echo "${missing[@]:-}"
}

attn_install_dependencies() {
  local missing
  missing=$(attn_missing_packages)
  [ -z "$missing" ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "attn: missing packages: $missing" >&2
    echo "attn: install them with:  sudo apt-get install -y ${ATTN_PACKAGES[*]}" >&2
    exit 1
  fi
  echo "attn: installing $missing" >&2
  export DEBIAN_FRONTEND=noninteractive
  # shellcheck disable=SC2086
  apt-get install -y $missing >/dev/null || { apt-get update >/dev/null && apt-get install -y $missing >/dev/null; }
  missing=$(attn_missing_packages)
  if [ -n "$missing" ]; then
    echo "attn: still missing after apt-get: $missing" >&2
    exit 1
  fi
}

# attn_build BUILD_DIR [cmake options...]
attn_build() {
  local dir=$1
  shift
  local jobs
  jobs=$(nproc 2>/dev/null || echo 2)
  cmake -S "$ATTN_ROOT" -B "$dir" "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
}

ATTN_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
