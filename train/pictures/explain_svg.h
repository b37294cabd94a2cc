// The picture of an Explanation (train/pictures/explain.h) as a standalone SVG:
// a header with the sentence, the prediction and its probability, then the
// encoder's attention as heat maps (rows = queries, columns = keys; darker =
// heavier; grey = masked pairs; a colour scale under each map says what its
// darkest shade is) and source2token weights as bars over the tokens:
//   mtsa      each head's token2token weights sigmoid(R) (one scale, 0 to 1)
//             and its alignment (Eq. 11's p averaged over features), with
//             the head's mask
//   disan     the forward and backward alignments
//   biblosan  each direction's intra-block alignment (the blocks along the
//             diagonal) and inter-block alignment
//   mstrans   every head's window attention, layer by layer ([CLS] first)
//   resan     the forward and backward soft alignments; heads (rows) and
//             dependents (columns) the hard attention selected are marked
// Alignments are shaded row by row (each query's largest weight darkest).
// Multi-dimensional weights are averaged over the features, or show one.
// Tokens are labelled whole. The picture is sized to its content: maps side
// by side up to 900 px (the width the README shows it at, so the sizes in
// px are the sizes read there); cells shrink with the sentence's length, so
// a sentence of up to about 18 tokens fits two maps to a row.
#pragma once
#include <string>

#include "attn/train/pictures/explain.h"

namespace attn {

struct ExplainPictureOptions {
  int64_t feature = -1;  // -1: average over the features; else this feature
  int64_t token = 0;     // token tasks: the token (0-based) whose attention is drawn
};

// A token task's Explanation (tags set) is drawn differently: each token
// with its predicted tag under it, then, for every map above, the chosen
// token's row as bars over the keys (what that token attends to); the
// sentence readout (source2token), which a tagger does not use, is left out.
// Any tag set works: the picture takes the tags' names.
//
// Throws when options.feature is not a feature index of the weights shown,
// and, for a token task, when options.token is not a token of the sentence.
std::string render_explanation_svg(const Explanation& e, const ExplainPictureOptions& options = {});

}  // namespace attn
