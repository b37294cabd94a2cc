#!/usr/bin/env python3
"""Checks the layering on every quoted #include, lowest layer first:

    util <- engine <- ops <- nn <- models <- train/optim, train/text <- train/data <- train <- train/bench <- train/cli

A file may include its own layer and the layers below it, never one above;
train/optim and train/data include neither models/ nor each other, and
nothing but train/cli/ (and the tests, which drive the program) includes
train/cli/. Inside ops/, the CPU performance machinery (ops/cpu/) includes
no op family, and each family folder ops/<family>/ holds only files named
<family>.* or <family>_*. nn/ and models/ call the plain products of
ops/matmul/matmul.h, never the fused entry points (ops/matmul/matmul_fused.h):
which kernel serves a product is decided in ops/. Prints every offending
line and exits 1 when there is one.
Usage: check_layering.py [REPO_ROOT]
"""
import os
import re
import sys

# folder -> the include prefixes (regular expressions) it may not use; the
# longest folder that matches a file decides.
FORBIDDEN = {
    "util/": [r"engine/", r"ops/", r"nn/", r"models/", r"train/"],
    "engine/": [r"ops/", r"nn/", r"models/", r"train/"],
    "ops/": [r"nn/", r"models/", r"train/"],
    # The GEMM, panels, threads and vector math serve the families and know
    # none of them (ops/host_device.h and ops/head_rows.h are shared helpers).
    "ops/cpu/": [r"nn/", r"models/", r"train/", r"ops/(?!cpu/|host_device\.h$|head_rows\.h$)"],
    # Layers and models say what they compute; ops/ picks the fused kernel.
    "nn/": [r"models/", r"train/", r"ops/matmul/matmul_fused\.h$"],
    "models/": [r"train/", r"ops/matmul/matmul_fused\.h$"],
    "train/optim/": [r"nn/", r"models/", r"train/(?!optim/)"],
    "train/data/": [r"nn/", r"models/", r"train/(?!data/|text/)"],
    # Tokenisation and BPE for translation, below the loaders that use them.
    "train/text/": [r"nn/", r"models/", r"train/(?!text/)"],
    "train/": [r"train/bench/", r"train/cli/"],
    # The benchmark measures encoders; it never includes the training loop
    # (the files directly in train/).
    "train/bench/": [r"train/cli/", r"train/[^/]+$"],
    "train/cli/": [],
    "tests/": [],
}
NOT_CLI = [r"train/cli/"]  # for every folder but train/cli/ and tests/
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# Project headers are included as "attn/engine/tensor.h" (the installed
# form); the rules look at the path after attn/.
PREFIX = re.compile(r"^attn/")


def rules_for(path):
    folders = [f for f in FORBIDDEN if path.startswith(f)]
    if not folders:
        return []
    folder = max(folders, key=len)
    extra = [] if folder in ("train/cli/", "tests/") else NOT_CLI
    return [(folder, p) for p in FORBIDDEN[folder] + extra]


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    root = os.path.abspath(root)
    problems = 0
    ops = os.path.join(root, "ops")
    for family in sorted(os.listdir(ops)):
        folder = os.path.join(ops, family)
        if family == "cpu" or not os.path.isdir(folder):
            continue
        for name in sorted(os.listdir(folder)):
            if not (name.startswith(family + ".") or name.startswith(family + "_")):
                print("layering: ops/%s/%s is not named after its family (%s.* or %s_*)" % (family, name, family, family))
                problems += 1
    for top in ("util", "engine", "ops", "nn", "models", "train", "tests"):
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            for name in sorted(names):
                if not name.endswith((".h", ".cpp", ".cu", ".cuh")):
                    continue
                full = os.path.join(dirpath, name)
                path = os.path.relpath(full, root).replace(os.sep, "/")
                rules = rules_for(path)
                with open(full, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = PREFIX.sub("", m.group(1))
                        for folder, prefix in rules:
                            if re.match(prefix, target):
                                print('layering: %s:%d includes "%s" (%s may not include %s)'
                                      % (path, number, m.group(1), folder, prefix))
                                problems += 1
    if problems:
        print("layering: %d include(s) point up; see docs/engine.md, Layout" % problems)
        return 1
    print("layering: every #include points down")
    return 0


if __name__ == "__main__":
    sys.exit(main())
