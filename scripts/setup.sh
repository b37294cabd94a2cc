#!/usr/bin/env bash
# Shared by scripts/run.sh and scripts/test.sh: installs what a fresh Debian
# machine lacks (as root) or prints the exact command (otherwise), then
# configures and builds into the folder given as $1 with the CMake options
# that follow.
set -euo pipefail

# Every Debian package the build and the tests use, with how to tell it is
# there. The README's install line lists exactly these (checked by the CTest
# test setup.readme_lists_packages). OpenMP comes with g++ (libgomp); python3
# runs the layering check (scripts/check_layering.py). Open MPI builds and
# tests data-parallel training (optional for the build, which goes without
# it; the test command runs the data-parallel tests, so it installs it).
ATTN_PACKAGES=(cmake g++ make pkg-config python3 libopenblas-dev libgtest-dev libgmock-dev libopenmpi-dev openmpi-bin)

attn_have_package() {
  case "$1" in
    cmake | g++ | make | pkg-config | python3) command -v "$1" >/dev/null 2>&1 ;;
    libopenblas-dev) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists openblas ;;
    libgtest-dev) [ -f /usr/include/gtest/gtest.h ] && attn_have_static_lib gtest ;;
    libgmock-dev) [ -f /usr/include/gmock/gmock.h ] && attn_have_static_lib gmock ;;
    libopenmpi-dev) command -v pkg-config >/dev/null 2>&1 && pkg-config --exists ompi-c ;;
    openmpi-bin) command -v mpirun >/dev/null 2>&1 ;;
    npm) command -v npm >/dev/null 2>&1 ;;
    *) echo "attn: setup.sh knows no check for package '$1'" >&2; return 2 ;;
  esac
}

attn_have_static_lib() {
  compgen -G "/usr/lib/*/lib$1.a" >/dev/null || compgen -G "/usr/lib/lib$1.a" >/dev/null
}

# attn_install_dependencies [extra packages...]: installs ATTN_PACKAGES and the
# extras (as root) or prints the exact apt-get command and exits non-zero.
attn_install_dependencies() {
  local wanted=("${ATTN_PACKAGES[@]}" "$@") missing=() package
  for package in "${wanted[@]}"; do
    attn_have_package "$package" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -ne 0 ]; then
    echo "attn: missing packages: ${missing[*]}" >&2
    echo "attn: install them with:  sudo apt-get install -y ${missing[*]}" >&2
    exit 1
  fi
  echo "attn: installing ${missing[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y "${missing[@]}" >/dev/null; }
  local still=()
  for package in "${missing[@]}"; do
    attn_have_package "$package" || still+=("$package")
  done
  if [ ${#still[@]} -ne 0 ]; then
    echo "attn: still missing after apt-get: ${still[*]}" >&2
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
