#!/usr/bin/env bash
# The main job: installs what is missing, builds, prints the gradcheck report
# for every op, and trains a small MLP on two interleaved spirals. (The
# papers' models on the default data replace the second step when the
# training stack lands.)
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
attn_install_dependencies
cd "$ATTN_ROOT"
attn_build build -DCMAKE_BUILD_TYPE=Release
build/bin/attn gradcheck
build/bin/attn spirals "$@"
