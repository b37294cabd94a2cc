// The picture of an Explanation (train/pictures/explain.h) as a standalone SVG:
// a header with the sentence, the prediction and its probability, then the
// encoder's attention as heat maps (rows = queries, columns = keys; darker =
// heavier, scaled to each map's largest weight; grey = masked pairs) and
// source2token weights as a strip over the tokens:
//   mtsa      each head's token2token weights sigmoid(R) and its alignment
//             (Eq. 11's p averaged over features), with the head's mask
//   disan     the forward and backward alignments
//   biblosan  each direction's intra-block alignment (the blocks along the
//             diagonal) and inter-block alignment
//   mstrans   every head's window attention, layer by layer ([CLS] first)
//   resan     the forward and backward soft alignments; heads (rows) and
//             dependents (columns) the hard attention selected are marked
// Multi-dimensional weights are averaged over the features, or show one.
#pragma once
#include <string>

#include "attn/train/pictures/explain.h"

namespace attn {

struct ExplainPictureOptions {
  int64_t feature = -1;  // -1: average over the features; else this feature
};

// Throws when options.feature is not a feature index of the weights shown.
std::string render_explanation_svg(const Explanation& e, const ExplainPictureOptions& options = {});

}  // namespace attn
