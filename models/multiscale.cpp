#include "attn/models/multiscale.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

#include "attn/engine/error.h"
#include "attn/models/attention_trace.h"
#include "attn/util/text.h"
#include "attn/models/masks.h"
#include "attn/models/multi_head.h"
#include "attn/nn/init.h"
#include "attn/ops/binary/binary.h"
#include "attn/engine/copy.h"
#include "attn/ops/join/join.h"
#include "attn/ops/reduce/reduce.h"
#include "attn/ops/unary/unary.h"
#include "attn/ops/view/view.h"
#include "attn/ops/window_attention/window_attention.h"

namespace attn {

namespace {

std::string trimmed(const std::string& s) { return text::trim(s, " \t"); }

// A positive integer spelled exactly, or -1.
int64_t parse_positive(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) return -1;
  int64_t v = std::strtoll(s.c_str(), nullptr, 10);
  return v > 0 ? v : -1;
}

// Number of valid positions of each example (host copy of the mask).
std::vector<int64_t> valid_counts(const Tensor& mask) {
  std::vector<double> m = mask.to_vector();
  const int64_t b = mask.size(0), n = mask.size(1);
  std::vector<int64_t> counts(static_cast<size_t>(b), 0);
  for (int64_t i = 0; i < b; ++i)
    for (int64_t t = 0; t < n; ++t) counts[static_cast<size_t>(i)] += m[static_cast<size_t>(i * n + t)] != 0;
  return counts;
}

void check_mask(const char* op, const Tensor& x, const Tensor& mask) {
  ATTN_CHECK(mask.dtype() == DType::U8 && mask.shape() == Shape({x.size(0), x.size(1)}), op,
             "mask must be uint8 [B, n] = ", shape_str({x.size(0), x.size(1)}), ", got ", dtype_name(mask.dtype()),
             " ", shape_str(mask.shape()));
}

}  // namespace

int64_t Scale::radius(int64_t length) const { return divisor > 0 ? length / (2 * divisor) : (window - 1) / 2; }

std::string Scale::name() const { return divisor > 0 ? "n/" + std::to_string(divisor) : std::to_string(window); }

std::vector<Scale> parse_scales(const std::string& list) {
  std::vector<Scale> scales;
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    item = trimmed(item);
    Scale s;
    if (!item.empty() && (item[0] == 'n' || item[0] == 'N')) {
      const std::string rest = item.substr(1);
      s.divisor = rest.empty() ? 1 : rest[0] == '/' ? parse_positive(rest.substr(1)) : -1;
      ATTN_CHECK(s.divisor > 0, "mstrans", "scale '", item, "' in '", list,
                 "' is not a window size: use an odd integer or n/k with a positive integer k");
    } else {
      s.window = parse_positive(item);
      ATTN_CHECK(s.window > 0, "mstrans", "scale '", item, "' in '", list,
                 "' is not a window size: use an odd integer or n/k with a positive integer k");
      ATTN_CHECK(s.window % 2 == 1, "mstrans", "scale ", s.window, " in '", list,
                 "' must be an odd window size (1, 3, 5, ...): the window is centred on its token");
    }
    scales.push_back(s);
  }
  ATTN_CHECK(!scales.empty(), "mstrans", "no scales in '", list, "'");
  return scales;
}

std::vector<std::vector<int64_t>> scale_head_counts(int64_t layers, int64_t scales, int64_t heads, double alpha) {
  ATTN_CHECK(layers >= 1 && scales >= 1 && heads >= 1, "mstrans", "head counts need layers, scales and heads >= 1, got ",
             layers, ", ", scales, ", ", heads);
  ATTN_CHECK(std::isfinite(alpha), "mstrans", "alpha must be finite, got ", alpha);
  std::vector<std::vector<int64_t>> counts;
  for (int64_t l = 1; l <= layers; ++l) {
    const double step = layers > 1 ? alpha * static_cast<double>(layers - l) / static_cast<double>(layers - 1) : 0.0;
    // z_k = (K - k) step for k = 1..K; subtracting the max keeps exp finite.
    std::vector<double> z(static_cast<size_t>(scales));
    for (int64_t k = 0; k < scales; ++k) z[static_cast<size_t>(k)] = static_cast<double>(scales - 1 - k) * step;
    const double top = *std::max_element(z.begin(), z.end());
    double total = 0;
    for (double& v : z) total += (v = std::exp(v - top));
    std::vector<int64_t> row(static_cast<size_t>(scales));
    std::vector<double> rest(static_cast<size_t>(scales));
    int64_t assigned = 0;
    for (size_t k = 0; k < z.size(); ++k) {
      const double share = static_cast<double>(heads) * z[k] / total;
      row[k] = static_cast<int64_t>(std::floor(share + 1e-9));
      rest[k] = share - static_cast<double>(row[k]);
      assigned += row[k];
    }
    // Largest remainder; the stable sort breaks ties towards smaller scales.
    std::vector<size_t> order(z.size());
    for (size_t k = 0; k < order.size(); ++k) order[k] = k;
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rest[a] > rest[b]; });
    for (int64_t i = 0; i < heads - assigned; ++i) ++row[order[static_cast<size_t>(i)]];
    counts.push_back(row);
  }
  return counts;
}

Tensor window_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& valid,
                        const std::vector<int64_t>& radii) {
  const char* op = "window_attention";
  ATTN_CHECK(q.dim() == 4 && k.shape() == q.shape() && v.shape() == q.shape(), op,
             "q, k, v must share one shape [B, h, n, d_h], got ", shape_str(q.shape()), ", ", shape_str(k.shape()),
             ", ", shape_str(v.shape()));
  const int64_t b = q.size(0), n = q.size(2);
  ATTN_CHECK(valid.dtype() == DType::U8 && valid.shape() == Shape({b, n}), op, "valid must be uint8 [B, n] = ",
             shape_str({b, n}), ", got ", dtype_name(valid.dtype()), " ", shape_str(valid.shape()));
  // allowed[b, j, t]: query j may attend key j - R + t.
  const Tensor allowed = window_band_mask(valid, radii);
  WindowAttention a = fused_window_attention(q, k, v, allowed, 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  trace_attention("window", [&] { return a.probabilities; });  // [B, h, n, 2R+1]: query j, key j - R + t
  trace_attention("window_mask", [&] { return unsqueeze(allowed, 1); });
  return a.out;
}

MultiScaleAttention::MultiScaleAttention(int64_t features, std::vector<Scale> scales, std::vector<int64_t> head_counts,
                                         Generator& gen, DType dtype)
    : features_(features),
      heads_(0),
      scales_(std::move(scales)),
      counts_(std::move(head_counts)),
      wq_(features, features, gen, false, dtype),
      wk_(features, features, gen, false, dtype),
      wv_(features, features, gen, false, dtype),
      wo_(features, features, gen, false, dtype) {
  const char* op = "MultiScaleAttention";
  ATTN_CHECK(counts_.size() == scales_.size(), op, "needs one head count per scale: ", scales_.size(),
             " scales, ", counts_.size(), " counts");
  for (int64_t c : counts_) {
    ATTN_CHECK(c >= 0, op, "head counts must be >= 0, got ", shape_str(counts_));
    heads_ += c;
  }
  ATTN_CHECK(heads_ > 0 && features % heads_ == 0, op, "features ", features, " must be a positive multiple of the ",
             heads_, " heads in head counts ", shape_str(counts_));
  register_module("q", wq_);
  register_module("k", wk_);
  register_module("v", wv_);
  register_module("out", wo_);
}

Tensor MultiScaleAttention::forward(const Tensor& x, const Tensor& mask, const std::vector<int64_t>& lengths) const {
  const char* op = "MultiScaleAttention";
  ATTN_CHECK(x.dim() == 3 && x.size(2) == features_, op, "expects x [B, n, ", features_, "], got ",
             shape_str(x.shape()));
  check_mask(op, x, mask);
  const std::vector<int64_t> n_of = lengths.empty() ? valid_counts(mask) : lengths;
  ATTN_CHECK(static_cast<int64_t>(n_of.size()) == x.size(0), op, "needs one length per example (", x.size(0),
             "), got ", n_of.size());
  // One fused call over every head: each head gets its scale's band in a
  // per-head mask, the split_heads views are read in place and the heads
  // come back in [B, n, h, d] order, so merge_heads is a view.
  std::vector<std::vector<int64_t>> radii_of_scale(scales_.size());  // [scale][example]
  std::vector<std::vector<int64_t>> radii_of_head;                     // [head][example]
  for (size_t s = 0; s < scales_.size(); ++s) {
    for (int64_t len : n_of) radii_of_scale[s].push_back(scales_[s].radius(len));
    radii_of_head.insert(radii_of_head.end(), static_cast<size_t>(counts_[s]), radii_of_scale[s]);
  }
  const Tensor allowed = window_band_mask_per_head(mask, radii_of_head);  // [B, h, n, 2R+1]
  Tensor q = split_heads(wq_(x), heads_), k = split_heads(wk_(x), heads_), v = split_heads(wv_(x), heads_);
  WindowAttention a = fused_window_attention(q, k, v, allowed, 1.0 / std::sqrt(static_cast<double>(q.size(3))));
  // The traces, per scale, as window_attention records them: the heads of
  // the scale and the band of its own widest radius.
  const int64_t n = x.size(1), reach = (allowed.size(3) - 1) / 2;
  int64_t first = 0;
  for (size_t s = 0; s < scales_.size(); ++s) {
    const int64_t c = counts_[s];
    if (c == 0) continue;
    int64_t own = 0;  // the scale's widest radius, capped at n - 1 as in window_band_mask
    for (int64_t r : radii_of_scale[s]) own = std::max(own, std::min(r, std::max<int64_t>(n - 1, 0)));
    AttentionTraceScope trace_scope("scale=" + scales_[s].name());
    trace_attention("window",
                    [&] { return narrow(narrow(a.probabilities, 1, first, c), 3, reach - own, 2 * own + 1); });
    trace_attention("window_mask", [&] { return narrow(narrow(allowed, 1, first, 1), 3, reach - own, 2 * own + 1); });
    first += c;
  }
  return zero_padded(wo_(merge_heads(a.out)), mask);
}

MultiScaleLayer::MultiScaleLayer(int64_t hidden, const std::vector<Scale>& scales,
                                 const std::vector<int64_t>& head_counts, double keep_prob, Generator& init,
                                 Generator& noise, DType dtype)
    : msmsa_(hidden, scales, head_counts, init, dtype), ln_(hidden, 1e-6, dtype), drop_(keep_prob, noise) {
  register_module("msmsa", msmsa_);
  register_module("ln", ln_);
  register_module("dropout", drop_);
}

Tensor MultiScaleLayer::forward(const Tensor& h, const Tensor& mask, const std::vector<int64_t>& lengths) const {
  return zero_padded(ln_(h + drop_(relu(msmsa_.forward(h, mask, lengths)))), mask);
}

namespace {
const MultiScaleOptions& checked(const MultiScaleOptions& o) {
  const char* op = "mstrans";
  ATTN_CHECK(o.hidden > 0, op, "hidden must be positive, got ", o.hidden);
  ATTN_CHECK(o.layers >= 1, op, "layers must be at least 1, got ", o.layers);
  ATTN_CHECK(o.keep_prob > 0 && o.keep_prob <= 1, op, "keep_prob must lie in (0, 1], got ", o.keep_prob);
  return o;
}
}  // namespace

MultiScaleTransformer::MultiScaleTransformer(int64_t input_dim, const MultiScaleOptions& o, Generator& init,
                                             Generator& noise, DType dtype)
    : input_dim_(input_dim), hidden_(o.hidden), drop_(checked(o).keep_prob, noise) {
  const char* op = "mstrans";
  ATTN_CHECK(input_dim > 0, op, "input dimension must be positive, got ", input_dim);
  const std::vector<Scale> scales =
      o.scales.empty() ? parse_scales(mstrans_config_keys().default_string("scales")) : o.scales;
  std::vector<std::vector<int64_t>> counts = o.head_counts;
  if (counts.empty()) {
    counts = scale_head_counts(o.layers, static_cast<int64_t>(scales.size()), o.heads, o.alpha);
  } else {
    ATTN_CHECK(static_cast<int64_t>(counts.size()) == o.layers, op, "head counts give ", counts.size(),
               " layers, but layers = ", o.layers);
  }
  if (input_dim != hidden_) {
    proj_ = std::make_unique<Linear>(input_dim, hidden_, init, true, dtype);
    register_module("proj", *proj_);
  }
  // Glorot bound of a [1, hidden] weight.
  cls = register_parameter("cls", reshape(glorot_uniform(1, hidden_, init, dtype), {hidden_}));
  for (int64_t l = 0; l < o.layers; ++l) {
    layers_.push_back(std::make_unique<MultiScaleLayer>(hidden_, scales, counts[static_cast<size_t>(l)], o.keep_prob,
                                                        init, noise, dtype));
    register_module("layer" + std::to_string(l), *layers_.back());
  }
  register_module("dropout", drop_);
}

EncoderOutput MultiScaleTransformer::encode_tokens(const Tensor& x, const Tensor& mask) {
  const char* op = "mstrans";
  ATTN_CHECK(x.dim() == 3 && x.size(2) == input_dim_, op, "expects x [B, n, ", input_dim_, "], got ",
             shape_str(x.shape()));
  check_mask(op, x, mask);
  const int64_t b = x.size(0), n = x.size(1);
  const std::vector<int64_t> lengths = valid_counts(mask);  // N of the ratio scales: the sentence without [CLS]
  Tensor h = drop_(proj_ ? (*proj_)(x) : x);
  h = concat({expand(reshape(cls, {1, 1, hidden_}), {b, 1, hidden_}), h}, 1);
  Tensor valid = concat({ones({b, 1}, DType::U8, mask.device()), mask}, 1);
  h = zero_padded(h, valid);
  for (size_t l = 0; l < layers_.size(); ++l) {
    AttentionTraceScope trace_scope("layer" + std::to_string(l));
    h = layers_[l]->forward(h, valid, lengths);
  }

  Tensor tokens = narrow(h, 1, 1, n);
  Tensor first = squeeze(narrow(h, 1, 0, 1), 1);
  const Tensor zero_u8 = zeros({}, DType::U8, mask.device());
  Tensor padded = eq(unsqueeze(mask, -1), zero_u8);
  Tensor pooled = max(masked_fill(tokens, padded, -std::numeric_limits<double>::infinity()), {1});
  // An empty sentence reads out zeros, like every other encoder (its max-pool is -inf).
  Tensor nonempty = zeros({b, 1}, DType::U8);
  for (int64_t i = 0; i < b; ++i) nonempty.data<uint8_t>()[i] = lengths[static_cast<size_t>(i)] > 0;
  if (mask.device() != Device::CPU) nonempty = to_device(nonempty, mask.device());
  Tensor sentence = where(nonempty, concat({first, pooled}, 1), zeros({}, h.dtype(), h.device()));
  return {tokens, sentence};
}

namespace {
// head_counts: layers x scales integers, layer-major.
std::vector<std::vector<int64_t>> head_counts_from(const std::vector<int64_t>& flat, int64_t layers, int64_t scales) {
  ATTN_CHECK(static_cast<int64_t>(flat.size()) == layers * scales, "mstrans", "head_counts has ", flat.size(),
             " entries; it needs layers x scales = ", layers, " x ", scales, " = ", layers * scales,
             " (layer-major: the counts of layer 0 for every scale, then layer 1, ...)");
  std::vector<std::vector<int64_t>> rows;
  for (int64_t l = 0; l < layers; ++l)
    rows.emplace_back(flat.begin() + l * scales, flat.begin() + (l + 1) * scales);
  return rows;
}

void check_scale_list(const std::string& list) { parse_scales(list); }
}  // namespace

const ConfigSchema& mstrans_config_keys() {
  using namespace config_limits;
  static const ConfigSchema table(
      "mstrans",
      {int_key("hidden", 300, 1, kWidth, "layer width D; tokens are hidden wide, the sentence 2 * hidden")
           .as_flag(),
       int_key("layers", 3, 1, kLayers, "layers L"),
       text_key("scales", "1,3,n/16,n/8,n/4", "odd window sizes and ratios n/k, comma-separated", check_scale_list,
                "the heads' scales, smallest first"),
       int_key("heads", 10, 1, kHeads, "heads per layer N' for Eq. 11-12").as_flag(),
       float_key("alpha", 0.5, -100, 100, "alpha of Eq. 11-12: how strongly lower layers favour small scales"),
       int_list_key("head_counts", "unset: Eq. 11-12 from heads and alpha", 0, kHeads,
                    "heads per layer and scale (layers x scales, layer-major) instead of heads and alpha"),
       probability_key("keep_prob", 1.0, "dropout keep probability after the input and in every layer (1: off)")});
  return table;
}

std::unique_ptr<Encoder> build_mstrans_encoder(const Config& config, const EncoderContext& ctx) {
  const ConfigSchema& keys = mstrans_config_keys();
  MultiScaleOptions o;
  o.hidden = keys.get_int(config, "hidden");
  o.layers = keys.get_int(config, "layers");
  o.scales = parse_scales(keys.get_string(config, "scales"));
  o.keep_prob = keys.get_float(config, "keep_prob");
  if (config.has("head_counts")) {
    ATTN_CHECK(!config.has("heads") && !config.has("alpha"), "mstrans",
               "set either head_counts or heads and alpha (Eq. 11-12), not both");
    o.head_counts =
        head_counts_from(keys.get_ints(config, "head_counts"), o.layers, static_cast<int64_t>(o.scales.size()));
  } else {
    o.heads = keys.get_int(config, "heads");
    o.alpha = keys.get_float(config, "alpha");
  }
  return std::make_unique<MultiScaleTransformer>(ctx.input_dim, o, *ctx.init, *ctx.noise, ctx.dtype);
}

}  // namespace attn
