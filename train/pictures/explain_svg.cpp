#include "attn/train/pictures/explain_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "attn/engine/error.h"
#include "attn/util/svg_chart.h"

namespace attn {

namespace {

// Sizes in px. A short sentence's picture is at most kPageWidth wide, the
// width the README shows it at, so these are the sizes a reader sees there.
constexpr double kPageWidth = 900, kMinPageWidth = 600, kMargin = 16, kGap = 24;
constexpr double kHeaderFont = 14, kSectionFont = 15, kTitleFont = 14, kScaleFont = 12;
// A block's title wraps to its content, but never narrower than this, so
// that "head 1 (forward mask): token2token" stays on one line.
constexpr double kMinTitleWidth = 340;
constexpr double kScaleWidth = 140, kBarHeight = 70;
constexpr const char* kMaskedGrey = "#d0d0d0";

// A heat map's cell: smaller for longer sentences, so that two maps of an
// 18-token sentence sit side by side within kPageWidth; never under 12 px
// (the 60 tokens --max-tokens allows fill one row), never over 26 px.
double cell_size(size_t tokens) {
  return std::clamp(std::floor(270.0 / static_cast<double>(std::max<size_t>(tokens, 1))), 12.0, 26.0);
}
// The token labels' type: 12 px, smaller only where cells are too narrow for it.
double label_font(double cell) { return std::clamp(cell - 3, 10.0, 12.0); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string fixed(double v, int digits) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", digits, v);
  return buf;
}

std::string shortest(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// White to dark blue by share of the map's largest value; the colour scale's
// gradient (kShadeGradient) runs between the same two colours.
std::string shade(double share) {
  share = std::clamp(std::isfinite(share) ? share : 0.0, 0.0, 1.0);
  const int r = static_cast<int>(std::lround(255 - share * (255 - 8)));
  const int g = static_cast<int>(std::lround(255 - share * (255 - 48)));
  const int b = static_cast<int>(std::lround(255 - share * (255 - 107)));
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}
constexpr const char* kShadeGradient =
    "<defs><linearGradient id=\"attn-shade\" x1=\"0\" y1=\"0\" x2=\"1\" y2=\"0\">"
    "<stop offset=\"0\" stop-color=\"#ffffff\"/><stop offset=\"1\" stop-color=\"#08306b\"/>"
    "</linearGradient></defs>\n";

struct Heatmap {
  std::string title;
  std::vector<std::string> rows, cols;
  std::vector<double> value;   // rows x cols
  std::vector<char> allowed;   // rows x cols; 0 = masked (grey)
  std::vector<char> row_marked, col_marked;  // highlighted labels (may be empty)
  // How values become shades: each row scaled to its own largest weight
  // (alignments: where each query looks), or all by one fixed top value
  // (> 0; e.g. 1 for weights in [0, 1]).
  bool per_row = true;
  double top = 0;
  // The row (and column) of each token where they are not the tokens one
  // to one: [CLS] first, or one row per block.
  std::vector<size_t> token_rows = {};
  size_t row_of_token(size_t token) const { return token_rows.empty() ? token : token_rows.at(token); }
};

struct Strip {
  std::string title;
  std::vector<std::string> labels;
  std::vector<double> value;
  std::vector<char> marked;  // highlighted labels (may be empty)
};

struct Section {
  std::string title;
  std::vector<Heatmap> maps;
  std::vector<Strip> strips;
};

// A drawn block: its SVG (drawn at the origin) and its size.
struct Block {
  std::string svg;
  double width = 0, height = 0;
};

std::string label_style(bool marked) { return marked ? " font-weight=\"bold\" fill=\"#b2182b\"" : ""; }

// Lines of text, the first baseline at y, one line every font + 4 px.
std::string text_lines(const std::vector<std::string>& lines, double x, double y, double font, const std::string& style) {
  std::string s;
  for (size_t k = 0; k < lines.size(); ++k)
    s += "<text x=\"" + num(x) + "\" y=\"" + num(y + static_cast<double>(k) * (font + 4)) + "\" font-size=\"" +
         num(font) + "\"" + style + ">" + xml_escape(lines[k]) + "</text>\n";
  return s;
}

double lines_height(size_t lines, double font) { return static_cast<double>(lines) * (font + 4); }

double widest(const std::vector<std::string>& lines, double font, bool bold) {
  double w = 0;
  for (const std::string& l : lines) w = std::max(w, estimated_text_width(l, font, bold));
  return w;
}

// What a map's shades mean, drawn from (x, y): the gradient from 0 to `high`
// and, when the map has masked pairs, the grey they are drawn in.
std::string colour_scale(double x, double y, const std::string& high, bool masked) {
  std::string s = "<g class=\"colour-scale\" transform=\"translate(" + num(x) + " " + num(y) + ")\">\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + num(kScaleWidth) +
       "\" height=\"10\" fill=\"url(#attn-shade)\" stroke=\"#888\" stroke-width=\"0.5\"/>\n";
  s += "<text x=\"0\" y=\"24\" font-size=\"" + num(kScaleFont) + "\">0</text>\n";
  s += "<text x=\"" + num(kScaleWidth) + "\" y=\"24\" text-anchor=\"end\" font-size=\"" + num(kScaleFont) + "\">" +
       xml_escape(high) + "</text>\n";
  if (masked) {
    s += "<rect x=\"" + num(kScaleWidth + 16) + "\" y=\"0\" width=\"10\" height=\"10\" fill=\"" + kMaskedGrey + "\"/>\n";
    s += "<text x=\"" + num(kScaleWidth + 30) + "\" y=\"10\" font-size=\"" + num(kScaleFont) + "\">masked</text>\n";
  }
  return s + "</g>\n";
}

double colour_scale_width(bool masked) {
  return kScaleWidth + (masked ? 30 + estimated_text_width("masked", kScaleFont) : 0);
}

Block draw_heatmap(const Heatmap& m) {
  const size_t nr = m.rows.size(), nc = m.cols.size();
  const double cell = cell_size(std::max(nr, nc)), font = label_font(cell);
  const auto row_marked = [&](size_t i) { return !m.row_marked.empty() && m.row_marked[i]; };
  const auto col_marked = [&](size_t j) { return !m.col_marked.empty() && m.col_marked[j]; };
  double row_labels = 0;
  for (size_t i = 0; i < nr; ++i) row_labels = std::max(row_labels, estimated_text_width(m.rows[i], font, row_marked(i)));
  const double left = row_labels + 8;
  // Column labels are whole tokens turned 60 degrees: one of width w rises
  // 0.87 w above the grid and reaches 0.5 w to the right of its column.
  const auto col_x = [&](size_t j) { return left + cell * (static_cast<double>(j) + 0.5) + 0.3 * font; };
  double rise = font, right = left + cell * static_cast<double>(nc);
  for (size_t j = 0; j < nc; ++j) {
    const double w = estimated_text_width(m.cols[j], font, col_marked(j));
    rise = std::max(rise, 0.87 * w + 0.5 * font);
    right = std::max(right, col_x(j) + 0.5 * w + 0.5 * font);
  }
  const bool any_masked = std::find(m.allowed.begin(), m.allowed.end(), 0) != m.allowed.end();
  const double content = std::max(right, left + colour_scale_width(any_masked));
  const std::vector<std::string> title = wrap_text(m.title, std::max(content, kMinTitleWidth), kTitleFont, true);
  const double top = lines_height(title.size(), kTitleFont) + 4 + rise;

  // The value drawn darkest in each row.
  std::vector<double> peak(nr, m.top);
  if (m.top <= 0)
    for (size_t k = 0; k < m.value.size(); ++k)
      if (m.allowed[k] && std::isfinite(m.value[k])) {
        double& p = peak[m.per_row ? k / nc : 0];
        p = std::max(p, m.value[k]);
      }
  if (!m.per_row) std::fill(peak.begin(), peak.end(), peak.empty() ? 0.0 : peak[0]);

  Block b;
  std::string& s = b.svg;
  s += text_lines(title, 0, kTitleFont, kTitleFont, " font-weight=\"bold\"");
  s += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(cell * static_cast<double>(nc)) +
       "\" height=\"" + num(cell * static_cast<double>(nr)) + "\" fill=\"" + kMaskedGrey + "\"/>\n";
  for (size_t i = 0; i < nr; ++i)
    for (size_t j = 0; j < nc; ++j) {
      const size_t k = i * nc + j;
      if (!m.allowed[k]) continue;
      s += "<rect x=\"" + num(left + cell * static_cast<double>(j)) + "\" y=\"" +
           num(top + cell * static_cast<double>(i)) + "\" width=\"" + num(cell) + "\" height=\"" + num(cell) +
           "\" fill=\"" + shade(peak[i] > 0 ? m.value[k] / peak[i] : 0) + "\"/>\n";
    }
  for (size_t i = 0; i < nr; ++i)
    s += "<text x=\"" + num(left - 5) + "\" y=\"" + num(top + cell * (static_cast<double>(i) + 0.5) + 0.35 * font) +
         "\" text-anchor=\"end\" font-size=\"" + num(font) + "\"" + label_style(row_marked(i)) + ">" +
         xml_escape(m.rows[i]) + "</text>\n";
  for (size_t j = 0; j < nc; ++j) {
    const double x = col_x(j), y = top - 4;
    s += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(font) + "\" transform=\"rotate(-60 " +
         num(x) + " " + num(y) + ")\"" + label_style(col_marked(j)) + ">" + xml_escape(m.cols[j]) + "</text>\n";
  }
  const double scale_y = top + cell * static_cast<double>(nr) + 12;
  const std::string high = m.per_row ? "each row's largest" : shortest(peak.empty() ? 0.0 : peak[0]);
  s += colour_scale(left, scale_y, high, any_masked);
  b.width = std::max(content, widest(title, kTitleFont, true));
  b.height = scale_y + 30;
  return b;
}

// One bar per token, its height and shade the weight's share of the largest;
// the axis on the left gives the largest weight's value.
Block draw_strip(const Strip& st) {
  const size_t n = st.labels.size();
  const double cell = cell_size(n), font = label_font(cell);
  double peak = 0;
  for (double v : st.value)
    if (std::isfinite(v)) peak = std::max(peak, v);
  const std::string peak_text = fixed(peak, 3);
  const double left = estimated_text_width(peak_text, kScaleFont) + 12;
  // Token labels turned 60 degrees downwards: one of width w drops 0.87 w
  // below the bars and reaches 0.5 w to the right of its column.
  const auto col_x = [&](size_t j) { return left + cell * (static_cast<double>(j) + 0.5) - 0.3 * font; };
  double drop = font, right = left + cell * static_cast<double>(n);
  for (size_t j = 0; j < n; ++j) {
    const double w = estimated_text_width(st.labels[j], font, !st.marked.empty() && st.marked[j]);
    drop = std::max(drop, 0.87 * w + 0.5 * font);
    right = std::max(right, col_x(j) + 0.5 * w + 0.5 * font);
  }
  const std::vector<std::string> title = wrap_text(st.title, std::max(right, kMinTitleWidth), kTitleFont, true);
  const double top = lines_height(title.size(), kTitleFont) + 10, base = top + kBarHeight;

  Block b;
  std::string& s = b.svg;
  s += text_lines(title, 0, kTitleFont, kTitleFont, " font-weight=\"bold\"");
  s += "<line x1=\"" + num(left - 3) + "\" y1=\"" + num(top) + "\" x2=\"" + num(left - 3) + "\" y2=\"" + num(base) +
       "\" stroke=\"#888\"/>\n";
  s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(top + 0.35 * kScaleFont) + "\" text-anchor=\"end\" font-size=\"" +
       num(kScaleFont) + "\">" + peak_text + "</text>\n";
  s += "<text x=\"" + num(left - 6) + "\" y=\"" + num(base) + "\" text-anchor=\"end\" font-size=\"" + num(kScaleFont) +
       "\">0</text>\n";
  s += "<line x1=\"" + num(left - 3) + "\" y1=\"" + num(base) + "\" x2=\"" + num(left + cell * static_cast<double>(n)) +
       "\" y2=\"" + num(base) + "\" stroke=\"#888\"/>\n";
  for (size_t j = 0; j < n; ++j) {
    const double x = left + cell * static_cast<double>(j);
    const double share = peak > 0 && std::isfinite(st.value[j]) ? std::clamp(st.value[j] / peak, 0.0, 1.0) : 0.0;
    s += "<rect x=\"" + num(x + 1) + "\" y=\"" + num(base - kBarHeight * share) + "\" width=\"" + num(cell - 2) +
         "\" height=\"" + num(kBarHeight * share) + "\" fill=\"" + shade(0.25 + 0.75 * share) + "\" data-weight=\"" +
         shortest(st.value[j]) + "\"/>\n";
    const double tx = col_x(j), ty = base + 6;
    s += "<text x=\"" + num(tx) + "\" y=\"" + num(ty) + "\" font-size=\"" + num(font) + "\" transform=\"rotate(60 " +
         num(tx) + " " + num(ty) + ")\"" + label_style(!st.marked.empty() && st.marked[j]) + ">" +
         xml_escape(st.labels[j]) + "</text>\n";
  }
  b.width = std::max(right, widest(title, kTitleFont, true));
  b.height = base + 6 + drop + 6;
  return b;
}

// The values of a [.., d] tensor with its last axis averaged, or one feature picked.
std::vector<double> features_reduced(const Tensor& t, int64_t feature, const std::string& what) {
  const int64_t d = t.size(t.dim() - 1);
  ATTN_CHECK(feature < d, "explain", "--feature ", feature, " is out of range: the ", what, " weights have ", d,
             " features (0 to ", d - 1, ")");
  const std::vector<double> all = t.to_vector();
  std::vector<double> out(all.size() / static_cast<size_t>(d));
  for (size_t k = 0; k < out.size(); ++k) {
    const double* row = all.data() + k * static_cast<size_t>(d);
    if (feature >= 0) {
      out[k] = row[feature];
    } else {
      double total = 0;
      for (int64_t f = 0; f < d; ++f) total += row[f];
      out[k] = total / static_cast<double>(d);
    }
  }
  return out;
}

std::string feature_note(int64_t feature) {
  return feature >= 0 ? "feature " + std::to_string(feature) : "mean over features";
}

// Whether query i may attend key j under a DiSA-style direction.
bool direction_allows(const std::string& direction, size_t i, size_t j) {
  if (direction == "forward") return j < i;
  if (direction == "backward") return j > i;
  return j != i;
}

std::string mask_name(const std::vector<char>& allowed, size_t n) {
  for (const char* dir : {"forward", "backward", "none"}) {
    bool same = true;
    for (size_t i = 0; i < n && same; ++i)
      for (size_t j = 0; j < n && same; ++j) same = (allowed[i * n + j] != 0) == direction_allows(dir, i, j);
    if (same) return dir;
  }
  return "window";
}

constexpr const char* kReadoutTitle = "source2token weights (sentence readout, ";

Strip source2token_strip(const Explanation& e, int64_t feature) {
  return {kReadoutTitle + feature_note(feature) + ")", e.tokens,
          features_reduced(e.trace.get("source2token"), feature, "source2token"), {}};
}

void add_mtsa(const Explanation& e, int64_t feature, std::vector<Section>& out) {
  const Tensor& t2t = e.trace.get("token2token");
  const Tensor& mask = e.trace.get("mask");
  const int64_t heads = t2t.size(1);
  const size_t n = e.tokens.size(), nn = n * n;
  const std::vector<double> weights = t2t.to_vector(), allowed = mask.to_vector();
  const std::vector<double> align = features_reduced(e.trace.get("alignment"), feature, "alignment");
  Section s{"MTSA: per head, the token2token weights sigmoid(R) and the alignment p (Eq. 11, " +
                feature_note(feature) + "); rows = queries, columns = keys; grey = masked by the head's mask", {}, {}};
  for (int64_t c = 0; c < heads; ++c) {
    const size_t at = static_cast<size_t>(c) * nn;
    std::vector<char> ok(allowed.begin() + static_cast<std::ptrdiff_t>(at),
                         allowed.begin() + static_cast<std::ptrdiff_t>(at + nn));
    const std::string head = "head " + std::to_string(c + 1) + " (" + mask_name(ok, n) + " mask)";
    Heatmap t2t{head + ": token2token", e.tokens, e.tokens,
                {weights.begin() + static_cast<std::ptrdiff_t>(at), weights.begin() + static_cast<std::ptrdiff_t>(at + nn)},
                ok, {}, {}};
    t2t.per_row = false;
    t2t.top = 1;  // E_R lies in [0, 1]: sigmoid(R), or exp(R - the row's maximum) for identity sigma_t
    s.maps.push_back(std::move(t2t));
    s.maps.push_back({head + ": alignment", e.tokens, e.tokens,
                      {align.begin() + static_cast<std::ptrdiff_t>(at), align.begin() + static_cast<std::ptrdiff_t>(at + nn)},
                      ok, {}, {}});
  }
  s.strips.push_back(source2token_strip(e, feature));
  out.push_back(std::move(s));
}

// A DiSA-style [1, n, n, d] alignment of one direction as a heat map.
Heatmap direction_map(const Explanation& e, const std::string& direction, int64_t feature,
                      const std::function<bool(size_t, size_t)>& also_allowed) {
  const size_t n = e.tokens.size();
  Heatmap m{direction + " alignment", e.tokens, e.tokens,
            features_reduced(e.trace.get(direction + ".alignment"), feature, direction), {}, {}, {}};
  m.allowed.resize(n * n);
  for (size_t i = 0; i < n; ++i)
    for (size_t j = 0; j < n; ++j) m.allowed[i * n + j] = direction_allows(direction, i, j) && also_allowed(i, j);
  return m;
}

void add_disan(const Explanation& e, int64_t feature, std::vector<Section>& out) {
  Section s{"DiSAN: the forward and backward alignments (" + feature_note(feature) +
                "; rows = queries, columns = keys; grey = masked by the direction)", {}, {}};
  for (const char* dir : {"forward", "backward"}) s.maps.push_back(direction_map(e, dir, feature, [](size_t, size_t) { return true; }));
  s.strips.push_back(source2token_strip(e, feature));
  out.push_back(std::move(s));
}

void add_resan(const Explanation& e, int64_t feature, std::vector<Section>& out) {
  const auto count = [](const std::vector<int>& z) { return std::to_string(std::count(z.begin(), z.end(), 1)); };
  Section s{"ReSAN: soft alignments (" + feature_note(feature) +
                ") among the tokens the hard attention (RSS) selected: red rows = selected heads, red columns = "
                "selected dependents; grey = masked",
            {}, {}};
  for (const char* dir : {"forward", "backward", "none"}) {
    if (!e.trace.has(std::string(dir) + ".alignment")) continue;
    Heatmap m = direction_map(e, dir, feature, [&](size_t i, size_t j) { return e.heads[i] && e.dependents[j]; });
    m.title += " (heads " + count(e.heads) + ", dependents " + count(e.dependents) + " of " +
               std::to_string(e.tokens.size()) + " tokens)";
    m.row_marked.assign(e.heads.begin(), e.heads.end());
    m.col_marked.assign(e.dependents.begin(), e.dependents.end());
    s.maps.push_back(std::move(m));
  }
  // Fig. 3: the fusion gate F of Eq. 14 per token; a large F keeps the
  // token's own h, a small one takes its context s.
  for (const char* dir : {"forward", "backward", "none"}) {
    const std::string name = std::string(dir) + ".fusion_gate";
    if (!e.trace.has(name)) continue;
    s.strips.push_back({std::string(dir == std::string("none") ? "" : std::string(dir) + " ") +
                            "fusion gate F (Eq. 14, " + feature_note(feature) +
                            "): large = the token's own h, small = its context s; red = selected heads",
                        e.tokens, features_reduced(e.trace.get(name), feature, name),
                        std::vector<char>(e.heads.begin(), e.heads.end())});
  }
  if (e.trace.has("source2token")) s.strips.push_back(source2token_strip(e, feature));
  if (s.maps.empty())
    s.title = "ReSAN without soft self-attention: the sentence readout over the tokens the hard attention selected";
  if (!s.maps.empty() || !s.strips.empty()) out.push_back(std::move(s));
}

void add_biblosan(const Explanation& e, int64_t feature, std::vector<Section>& out) {
  const size_t n = e.tokens.size();
  Section s{"Bi-BloSAN: intra-block alignments (the blocks along the diagonal) and inter-block alignments (" +
                feature_note(feature) + "; grey = masked)", {}, {}};
  for (const std::string dir : {"forward", "backward"}) {
    const Tensor& intra = e.trace.get(dir + ".intra");  // [m, r, r, d]
    const size_t blocks = static_cast<size_t>(intra.size(0)), r = static_cast<size_t>(intra.size(1));
    const std::vector<double> pi = features_reduced(intra, feature, dir + " intra-block");
    Heatmap m{dir + " intra-block (block length " + std::to_string(r) + ")", e.tokens, e.tokens,
              std::vector<double>(n * n, 0.0), std::vector<char>(n * n, 0), {}, {}};
    for (size_t i = 0; i < n; ++i)
      for (size_t j = 0; j < n; ++j)
        if (i / r == j / r && direction_allows(dir, i % r, j % r)) {
          m.allowed[i * n + j] = 1;
          m.value[i * n + j] = pi[((i / r) * r + i % r) * r + j % r];
        }
    s.maps.push_back(std::move(m));
    std::vector<std::string> names;
    for (size_t b = 0; b < blocks; ++b) {
      const size_t last = std::min(n, (b + 1) * r) - 1;
      names.push_back(std::to_string(b + 1) + ": " + e.tokens[b * r] + (last > b * r ? " \u2013 " + e.tokens[last] : ""));
    }
    Heatmap inter{dir + " inter-block", names, names, features_reduced(e.trace.get(dir + ".inter"), feature, dir + " inter-block"),
                  std::vector<char>(blocks * blocks, 0), {}, {}};
    for (size_t i = 0; i < blocks; ++i)
      for (size_t j = 0; j < blocks; ++j) inter.allowed[i * blocks + j] = direction_allows(dir, i, j);
    for (size_t t = 0; t < n; ++t) inter.token_rows.push_back(t / r);
    s.maps.push_back(std::move(inter));
  }
  s.strips.push_back(source2token_strip(e, feature));
  out.push_back(std::move(s));
}

// An encoder whose context fusion has no attention weights (the RNN and CNN
// baselines): the source2token readout on top is what it attends with.
void add_readout_only(const Explanation& e, int64_t feature, std::vector<Section>& out) {
  Section s{e.encoder + ": its context fusion has no attention weights; the sentence readout's are shown", {}, {}};
  s.strips.push_back(source2token_strip(e, feature));
  out.push_back(std::move(s));
}

void add_mstrans(const Explanation& e, std::vector<Section>& out) {
  std::vector<std::string> labels{"[CLS]"};
  labels.insert(labels.end(), e.tokens.begin(), e.tokens.end());
  const size_t n = labels.size();
  std::string current_layer;
  int head_in_layer = 0;
  for (const std::string& name : e.trace.names()) {
    const std::string suffix = ".window";
    if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0) continue;
    const std::string scope = name.substr(0, name.size() - suffix.size());  // layer<l>.scale=<s>
    const std::string layer = scope.substr(0, scope.find('.'));
    const std::string scale = scope.substr(scope.find('=') + 1);
    if (layer != current_layer) {
      current_layer = layer;
      head_in_layer = 0;
      out.push_back({"Multi-Scale Transformer " + layer + ": each head's attention inside its window (scale = window "
                     "size; rows = queries, columns = keys; grey = outside the window)", {}, {}});
    }
    const Tensor& p = e.trace.get(name);                   // [1, c, n, w]
    const Tensor& ok = e.trace.get(scope + ".window_mask");  // [1, 1, n, w]
    const size_t heads = static_cast<size_t>(p.size(1)), w = static_cast<size_t>(p.size(3)), reach = (w - 1) / 2;
    const std::vector<double> pv = p.to_vector(), okv = ok.to_vector();
    for (size_t c = 0; c < heads; ++c) {
      Heatmap m{"head " + std::to_string(++head_in_layer) + " (scale " + scale + ")", labels, labels,
                std::vector<double>(n * n, 0.0), std::vector<char>(n * n, 0), {}, {}};
      for (size_t t = 0; t + 1 < n; ++t) m.token_rows.push_back(t + 1);  // [CLS] first
      for (size_t j = 0; j < n; ++j)
        for (size_t t = 0; t < w; ++t) {
          if (okv[j * w + t] == 0) continue;
          const size_t key = j + t - reach;  // in range wherever the window mask allows
          m.allowed[j * n + key] = 1;
          m.value[j * n + key] = pv[(c * n + j) * w + t];
        }
      out.back().maps.push_back(std::move(m));
    }
  }
}

// Token tasks: every map becomes the chosen token's row, drawn as bars over
// the keys with the token itself marked; the sentence readout is dropped
// (a tagger reads each token's own vector), other per-token strips stay.
void focus_on_token(std::vector<Section>& sections, size_t token) {
  for (Section& section : sections) {
    std::vector<Strip> strips;
    for (const Heatmap& m : section.maps) {
      const size_t row = m.row_of_token(token), nc = m.cols.size();
      Strip st{m.title, m.cols, std::vector<double>(nc, 0.0), std::vector<char>(nc, 0)};
      for (size_t j = 0; j < nc; ++j)
        if (m.allowed[row * nc + j]) st.value[j] = m.value[row * nc + j];
      st.marked[row] = 1;
      strips.push_back(std::move(st));
    }
    for (Strip& st : section.strips)
      if (st.title.rfind(kReadoutTitle, 0) != 0) strips.push_back(std::move(st));
    section.maps.clear();
    section.strips = std::move(strips);
  }
  sections.erase(std::remove_if(sections.begin(), sections.end(), [](const Section& s) { return s.strips.empty(); }),
                 sections.end());
}

// Each token with its predicted tag under it, left to right, wrapping at
// `width`; the chosen token and its tag in bold red.
Block draw_tagged_tokens(const std::vector<std::string>& tokens, const std::vector<std::string>& tags, size_t chosen,
                         double width) {
  Block b;
  double x = 0, y = kHeaderFont;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const bool marked = t == chosen;
    const double w = std::max(estimated_text_width(tokens[t], kHeaderFont, marked),
                              estimated_text_width(tags[t], kScaleFont, marked));
    if (x > 0 && x + w > width) {
      x = 0;
      y += 2 * (kHeaderFont + 6);
    }
    b.svg += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"" + num(kHeaderFont) + "\"" +
             label_style(marked) + ">" + xml_escape(tokens[t]) + "</text>\n";
    b.svg += "<text class=\"tag\" x=\"" + num(x) + "\" y=\"" + num(y + kHeaderFont + 4) + "\" font-size=\"" +
             num(kScaleFont) + "\" fill=\"" + (marked ? "#b2182b" : "#2166ac") + "\"" +
             (marked ? " font-weight=\"bold\"" : "") + ">" + xml_escape(tags[t]) + "</text>\n";
    x += w + 12;
    b.width = std::max(b.width, x - 12);
  }
  b.height = y + kHeaderFont + 8;
  return b;
}


// Blocks left to right in rows, a new row when the next block would pass
// kPageWidth; the rows as indices into `blocks`.
std::vector<std::vector<size_t>> rows_of(const std::vector<Block>& blocks) {
  std::vector<std::vector<size_t>> rows;
  double x = kMargin;
  for (size_t k = 0; k < blocks.size(); ++k) {
    if (rows.empty() || (x > kMargin && x + blocks[k].width + kMargin > kPageWidth)) {
      rows.emplace_back();
      x = kMargin;
    }
    rows.back().push_back(k);
    x += blocks[k].width + kGap;
  }
  return rows;
}

// The width a row of blocks takes, margins included.
double row_width(const std::vector<Block>& blocks, const std::vector<size_t>& row) {
  double w = 2 * kMargin - kGap;
  for (size_t k : row) w += blocks[k].width + kGap;
  return w;
}

// Draws the rows from y down; returns the y below the last.
double place(const std::vector<Block>& blocks, double y, std::string& svg) {
  for (const std::vector<size_t>& row : rows_of(blocks)) {
    double x = kMargin, height = 0;
    for (size_t k : row) {
      svg += "<g transform=\"translate(" + num(x) + " " + num(y) + ")\">\n" + blocks[k].svg + "</g>\n";
      x += blocks[k].width + kGap;
      height = std::max(height, blocks[k].height);
    }
    y += height + kGap;
  }
  return y;
}

}  // namespace

std::string render_explanation_svg(const Explanation& e, const ExplainPictureOptions& options) {
  ATTN_CHECK(options.feature >= -1, "explain", "--feature must be a feature index (>= 0) or -1 for the mean, got ",
             options.feature);
  std::vector<Section> sections;
  const int64_t f = options.feature;
  if (e.encoder == "mtsa") add_mtsa(e, f, sections);
  else if (e.encoder == "disan") add_disan(e, f, sections);
  else if (e.encoder == "biblosan") add_biblosan(e, f, sections);
  else if (e.encoder == "resan") add_resan(e, f, sections);
  else if (e.encoder == "mstrans") add_mstrans(e, sections);
  else if (e.trace.has("source2token") && e.tags.empty()) add_readout_only(e, f, sections);
  ATTN_CHECK(f < 0 || e.encoder != "mstrans", "explain",
             "--feature picks a feature of multi-dimensional attention; mstrans's attention is one weight per pair");
  const bool token_task = !e.tags.empty();
  const size_t n = e.tokens.size();
  if (token_task) {
    ATTN_CHECK(e.tags.size() == n, "explain", "the explanation has ", e.tags.size(), " tags for ", n, " tokens");
    ATTN_CHECK(options.token >= 0 && options.token < static_cast<int64_t>(n), "explain", "--token ", options.token,
               " is out of range: the sentence has ", n, " token", n == 1 ? "" : "s", " (0 to ", n - 1, ")");
    focus_on_token(sections, static_cast<size_t>(options.token));
  }

  // Every block is drawn first: the page is as wide as its widest row of
  // blocks (within kPageWidth unless one block alone is wider), and the text
  // wraps to that width.
  std::vector<std::vector<Block>> maps(sections.size()), strips(sections.size());
  double width = kMinPageWidth;
  for (size_t k = 0; k < sections.size(); ++k) {
    for (const Heatmap& m : sections[k].maps) maps[k].push_back(draw_heatmap(m));
    for (const Strip& st : sections[k].strips) strips[k].push_back(draw_strip(st));
    for (const auto* blocks : {&maps[k], &strips[k]})
      for (const std::vector<size_t>& row : rows_of(*blocks)) width = std::max(width, row_width(*blocks, row));
  }
  const double text_width = width - 2 * kMargin;

  // Header: the sentence, the note on truncation, the prediction.
  std::string sentence = "sentence:";
  for (const std::string& t : e.tokens) sentence += " " + t;
  std::vector<std::string> header = wrap_text(sentence, text_width, kHeaderFont);
  if (e.truncated())
    header.push_back("(long sentence: the first " + std::to_string(e.tokens.size()) + " of its " +
                     std::to_string(e.original_length) + " tokens were given to the model and are shown)");
  std::string prediction_text;
  if (token_task) {
    const size_t chosen = static_cast<size_t>(options.token);
    prediction_text = "predicted tags under the tokens; the bars are the attention of token " + std::to_string(chosen) +
                      " (\"" + e.tokens[chosen] + "\", tagged " + e.tags[chosen] +
                      "): its row of each map, one bar per key";
    if (e.predicate >= 0)
      prediction_text += "; the predicate is token " + std::to_string(e.predicate) + " (\"" +
                         e.tokens.at(static_cast<size_t>(e.predicate)) + "\")";
  } else {
    std::string classes;
    for (size_t k = 0; k < e.labels.size(); ++k)
      classes += (k ? ", " : "") + std::string("p(") + e.labels[k] + ") = " + fixed(e.probabilities.at(k), 4);
    prediction_text = "prediction: " + e.labels.at(static_cast<size_t>(e.predicted)) + " with probability " +
                      fixed(e.probabilities.at(static_cast<size_t>(e.predicted)), 4) + " (" + classes + ")";
  }
  const std::vector<std::string> prediction = wrap_text(prediction_text, text_width, kHeaderFont);
  header.insert(header.end(), prediction.begin(), prediction.end());
  if (sections.empty()) header.push_back("the " + e.encoder + " encoder records no attention weights to show");

  std::string body;
  double y = 28;
  body += "<text x=\"" + num(kMargin) + "\" y=\"" + num(y) + "\" font-size=\"17\" font-weight=\"bold\">attn explain: " +
          xml_escape(e.encoder) + "</text>\n";
  y += 8 + kHeaderFont;
  body += text_lines(header, kMargin, y, kHeaderFont, "");
  y += lines_height(header.size(), kHeaderFont);
  if (token_task) {
    const Block tagged = draw_tagged_tokens(e.tokens, e.tags, static_cast<size_t>(options.token), text_width);
    body += "<g class=\"tagged-tokens\" transform=\"translate(" + num(kMargin) + " " + num(y + 4) + ")\">\n" +
            tagged.svg + "</g>\n";
    y += 4 + tagged.height;
  }
  for (size_t k = 0; k < sections.size(); ++k) {
    y += 24;
    const std::vector<std::string> title = wrap_text(sections[k].title, text_width, kSectionFont, true);
    body += text_lines(title, kMargin, y, kSectionFont, " font-weight=\"bold\" fill=\"#333\"");
    y = place(maps[k], y + lines_height(title.size(), kSectionFont), body);
    y = place(strips[k], y, body);
  }
  y += 6;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(y) +
         "\" viewBox=\"0 0 " + num(width) + " " + num(y) + "\" font-family=\"sans-serif\">\n";
  out += kShadeGradient;
  out += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(y) + "\" fill=\"white\"/>\n";
  return out + body + "</svg>\n";
}

}  // namespace attn
