# Sourced by the data-parallel checks: write_marker_data writes a small
# two-class TSV data set whose label is told by one marker word ("alpha"
# or "beta") among random filler words, so a model learns it in a few
# dozen steps and its weights move every step.
#
#   write_marker_data DIR SEED EXAMPLES MIN_WORDS EXTRA_WORDS TRAIN DEV
#
# EXAMPLES lines of MIN_WORDS to MIN_WORDS + EXTRA_WORDS - 1 words, drawn
# with awk's srand(SEED): the first TRAIN go to DIR/train.tsv, the next DEV
# to DIR/dev.tsv (none when DEV is 0), the rest to DIR/test.tsv.
write_marker_data() {
  mkdir -p "$1"
  awk -v dir="$1" -v seed="$2" -v examples="$3" -v min_words="$4" -v extra="$5" -v train="$6" -v dev="$7" 'BEGIN {
    srand(seed); split("the a cat dog sat ran on mat big small old new red tree house car", w, " ");
    for (i = 0; i < examples; i++) {
      label = int(rand() * 2); line = "";
      n = min_words + int(rand() * extra); at = int(rand() * n);
      for (j = 0; j < n; j++) line = line (j ? " " : "") (j == at ? (label ? "alpha" : "beta") : w[1 + int(rand() * 16)]);
      print label "\t" line > (i < train ? dir "/train.tsv" : (i < train + dev ? dir "/dev.tsv" : dir "/test.tsv"));
    }
  }'
}
