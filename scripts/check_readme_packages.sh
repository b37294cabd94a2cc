#!/usr/bin/env bash
# CTest setup.readme_lists_packages: the README's install line must name
# exactly the packages scripts/setup.sh installs, in the same order, so a
# user who copies it gets what the build and the tests need.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=setup.sh
source "$root/scripts/setup.sh"
expected="apt-get install -y ${ATTN_PACKAGES[*]}"
if ! grep -qF "\`$expected\`" "$root/README.md"; then
  echo "README.md does not contain the install line \"$expected\" (the packages of scripts/setup.sh)" >&2
  grep -n "apt-get install" "$root/README.md" >&2 || true
  exit 1
fi
echo "README install line matches scripts/setup.sh: ${ATTN_PACKAGES[*]}"
