#!/usr/bin/env bash
# Uses a built attn the way a user does, from an installed prefix:
#   1. cmake --install BUILD --prefix WORK/prefix;
#   2. checks the installed tree: headers only under include/attn/, every
#      project include in them in the prefixed form (<prefix>/include alone on
#      the include path must do), the CMake package, attn.pc and bin/attn;
#   3. configures examples/ out of tree with find_package(attn) and
#      -DCMAKE_PREFIX_PATH=WORK/prefix, builds it and runs every example (each
#      checks its own result and exits non-zero when it fails);
#   4. compiles one file that includes every installed header and runs it,
#      with nothing but `pkg-config --cflags --libs attn`, next to a user's own
#      engine/, ops/, nn/, models/ and train/ folders whose headers must never
#      be picked up in place of ours.
# Usage: scripts/check_install.sh BUILD_DIR [WORK_DIR]   (CXX picks the compiler)
# CTest runs it as install.examples_build_and_run in a build without sanitizers.
set -euo pipefail
build=${1:?usage: check_install.sh BUILD_DIR [WORK_DIR]}
work=${2:-$(mktemp -d)}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
prefix=$work/prefix
fail() { echo "check_install: FAIL: $*" >&2; exit 1; }
say() { echo "check_install: $*" >&2; }
rm -rf "$prefix" "$work/examples" "$work/pkgconfig"
mkdir -p "$work/pkgconfig"

say "installing $build into $prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
[ -x "$prefix/bin/attn" ] || fail "bin/attn was not installed"
"$prefix/bin/attn" --help >/dev/null || fail "the installed attn --help failed"
[ -f "$prefix/lib/cmake/attn/attnConfig.cmake" ] || fail "no lib/cmake/attn/attnConfig.cmake"
[ -f "$prefix/lib/pkgconfig/attn.pc" ] || fail "no lib/pkgconfig/attn.pc"
[ -f "$prefix/include/attn/engine/tensor.h" ] || fail "no include/attn/engine/tensor.h"
stray=$(find "$prefix/include" -type f ! -name '*.h' -o -type f ! -path "$prefix/include/attn/*")
[ -z "$stray" ] || fail "files other than headers under include/attn: $stray"
unprefixed=$(grep -rnE '^\s*#\s*include\s+"(engine|ops|nn|models|train)/' "$prefix/include" || true)
[ -z "$unprefixed" ] || fail "installed headers include project headers without the attn/ prefix:
$unprefixed"

say "building examples/ against the installed package"
cmake -S "$root/examples" -B "$work/examples" -DCMAKE_PREFIX_PATH="$prefix" >"$work/examples.log" 2>&1 ||
  { cat "$work/examples.log"; fail "configuring examples/ with find_package(attn) failed"; }
cmake --build "$work/examples" -j2 >>"$work/examples.log" 2>&1 ||
  { cat "$work/examples.log"; fail "building examples/ failed"; }
examples=0
for source in "$root"/examples/*.cpp; do
  name=$(basename "$source" .cpp)
  say "running $name"
  (cd "$work/examples" && "./$name") || fail "example $name failed"
  examples=$((examples + 1))
done
[ "$examples" -gt 0 ] || fail "no example found in examples/"

say "compiling one file with pkg-config --cflags --libs attn"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
cflags=$(pkg-config --cflags attn) || fail "pkg-config does not find attn.pc"
libs=$(pkg-config --libs attn)
check=$work/pkgconfig/check.cpp
# The user's folders: a decoy engine/tensor.h, ... for every installed header.
(cd "$prefix/include/attn" && find . -name '*.h') | while read -r header; do
  mkdir -p "$work/pkgconfig/$(dirname "$header")"
  echo "#error \"the user's own $header was included instead of attn's\"" >"$work/pkgconfig/$header"
done
{
  # Every installed header (those that need the CUDA headers only when the
  # package was built with CUDA), then a gradient to check.
  (cd "$prefix/include" && find attn -name '*.h' | sort) | while read -r header; do
    if [[ "$cflags" != *-DATTN_WITH_CUDA* ]] && grep -qE '#\s*include\s+<(cuda|cublas)' "$prefix/include/$header"; then
      continue
    fi
    echo "#include <$header>"
  done
  cat <<'CPP'
#include <cstdio>
int main() {
  // d/dx sum(x * x) = 2x
  attn::Tensor x = attn::from_vector({1, -2, 3}, {3}).set_requires_grad();
  attn::sum(x * x).backward();
  const bool ok = x.grad().to_vector() == std::vector<double>{2, -4, 6};
  std::printf("pkg-config check: %s\n", ok ? "gradient of sum(x * x) is 2x" : "WRONG gradient");
  return ok ? 0 : 1;
}
CPP
} >"$check"
# shellcheck disable=SC2086  # the flags are meant to split
"${CXX:-c++}" -std=c++17 -I"$work/pkgconfig" "$check" $cflags $libs -o "$work/pkgconfig/check" ||
  fail "compiling with pkg-config's flags failed"
"$work/pkgconfig/check" || fail "the pkg-config program failed"
say "ok: installed, $examples examples built with find_package(attn) and run, pkg-config build run"
