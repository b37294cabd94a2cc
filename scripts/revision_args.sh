# Sourced by scripts/bench_revisions.sh and scripts/bench_train_revisions.sh:
# their shared command line, REV [ROUNDS] [-- arguments]. Before sourcing,
# set `name` (for messages) and `usage_lines` (the sed range of the caller's
# header comment that --help prints). Sets rev, rounds, commit, short, root
# (the checkout, also the working directory) and here (this checkout's
# binary), and leaves the arguments after `--` in "$@" of the caller.
usage() { sed -n "${usage_lines}p" "$0" | sed 's/^# \{0,1\}//'; }
if [ $# -lt 1 ] || [ "$1" = "--help" ] || [ "$1" = "-h" ]; then
  usage
  [ $# -ge 1 ] && exit 0 || exit 2
fi
rev=$1
shift
rounds=3
if [ $# -gt 0 ] && [ "$1" != "--" ]; then
  rounds=$1
  shift
fi
[ $# -gt 0 ] && [ "$1" = "--" ] && shift
case $rounds in '' | *[!0-9]* | 0) echo "$name: ROUNDS must be a positive integer, got '$rounds'" >&2; exit 2 ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
commit=$(git rev-parse --verify --quiet "$rev^{commit}") || { echo "$name: '$rev' is not a revision of this repository" >&2; exit 2; }
short=$(git rev-parse --short "$commit")
here=${ATTN_BINARY:-$root/build/bin/attn}
[ -x "$here" ] || { echo "$name: $here is missing; build this checkout first (scripts/test.sh or cmake)" >&2; exit 2; }
