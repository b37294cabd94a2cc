#!/usr/bin/env python3
"""Lists the AVX-512 clones (ATTN_SIMD_CLONES, ops/vector_math.h) in a binary
with how many of their instructions use 512-bit registers and how many are
scalar float arithmetic: a float kernel with no zmm instruction did not
vectorise (docs/engine.md, on what keeps GCC from it). Needs binutils (nm,
objdump, c++filt); not part of the build or the tests.

    scripts/simd_clone_report.py [build/bin/attn]
"""
import re
import signal
import subprocess
import sys


def main() -> int:
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quiet under `| head`
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help")):
        print(__doc__.strip())
        return 0 if len(sys.argv) == 2 else 2
    binary = sys.argv[1] if len(sys.argv) == 2 else "build/bin/attn"
    try:
        listing = subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"simd_clone_report: cannot list the symbols of {binary}: {e}", file=sys.stderr)
        return 1
    symbols = []
    for line in listing.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            symbols.append((int(parts[0], 16), parts[2]))
    rows = []
    for (start, name), (end, _) in zip(symbols, symbols[1:]):
        if not name.endswith(".arch_x86_64_v4"):
            continue
        readable = subprocess.run(["c++filt", name], capture_output=True, text=True).stdout.strip()
        if "double" in readable:  # float64 kernels call the C library's exp: not expected to vectorise
            continue
        code = subprocess.run(["objdump", "-d", "--no-show-raw-insn", f"--start-address={start}",
                               f"--stop-address={end}", binary], capture_output=True, text=True).stdout
        zmm = len(re.findall(r"%zmm", code))
        scalar = len(re.findall(r"\bv(add|sub|mul|div|fmadd\w*|max|min)ss\b", code))
        rows.append((zmm, scalar, readable.replace(" [clone .arch_x86_64_v4]", "")))
    rows.sort()
    print(f"{'zmm':>6} {'scalar':>6}  clone (fewest 512-bit instructions first)")
    for zmm, scalar, name in rows:
        flag = "  <- no 512-bit instruction" if zmm == 0 else ""
        print(f"{zmm:6d} {scalar:6d}  {name[:110]}{flag}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
