#include "attn/train/pictures/explain_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>

#include "attn/engine/error.h"
#include "attn/util/svg_chart.h"

namespace attn {

namespace {

constexpr double kCell = 13, kLabelChars = 14, kCharWidth = 6.2, kPageWidth = 1900, kGap = 30;

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

// Labels longer than kLabelChars characters (bytes; a cut inside a UTF-8
// sequence is repaired by xml_escape) end in "..".
std::string short_label(const std::string& s) {
  return s.size() <= kLabelChars ? s : s.substr(0, static_cast<size_t>(kLabelChars) - 2) + "..";
}

// White to dark blue by share of the map's largest value.
std::string shade(double share) {
  share = std::clamp(std::isfinite(share) ? share : 0.0, 0.0, 1.0);
  const int r = static_cast<int>(std::lround(255 - share * (255 - 8)));
  const int g = static_cast<int>(std::lround(255 - share * (255 - 48)));
  const int b = static_cast<int>(std::lround(255 - share * (255 - 107)));
  char buf[16];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", r, g, b);
  return buf;
}

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
};

struct Strip {
  std::string title;
  std::vector<std::string> labels;
  std::vector<double> value;
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

double label_width(const std::vector<std::string>& labels) {
  size_t chars = 1;
  for (const std::string& l : labels) chars = std::max(chars, short_label(l).size());
  return static_cast<double>(chars) * kCharWidth + 8;
}

std::string label_style(bool marked) { return marked ? " font-weight=\"bold\" fill=\"#b2182b\"" : ""; }

// A bold title and a note in smaller type, and the width they take.
std::string title_svg(const std::string& title, const std::string& note, double& width) {
  width = std::max(width, 7.8 * static_cast<double>(title.size()) + 6.0 * static_cast<double>(note.size()) + 10);
  return "<text x=\"0\" y=\"14\" font-size=\"13\" font-weight=\"bold\">" + xml_escape(title) +
         " <tspan font-weight=\"normal\" font-size=\"11\">" + xml_escape(note) + "</tspan></text>\n";
}

Block draw_heatmap(const Heatmap& m) {
  const size_t nr = m.rows.size(), nc = m.cols.size();
  const double left = label_width(m.rows), top = 22 + label_width(m.cols) * 0.87;
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
  b.width = left + kCell * static_cast<double>(nc) + 10;
  b.height = top + kCell * static_cast<double>(nr) + 12;
  std::string& s = b.svg;
  s += title_svg(m.title, m.per_row ? "(darkest = each row's largest weight)" : "(darkest = " + fixed(peak.empty() ? 0.0 : peak[0], 3) + ")", b.width);
  s += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(kCell * static_cast<double>(nc)) +
       "\" height=\"" + num(kCell * static_cast<double>(nr)) + "\" fill=\"#d0d0d0\"/>\n";
  for (size_t i = 0; i < nr; ++i)
    for (size_t j = 0; j < nc; ++j) {
      const size_t k = i * nc + j;
      if (!m.allowed[k]) continue;
      s += "<rect x=\"" + num(left + kCell * static_cast<double>(j)) + "\" y=\"" +
           num(top + kCell * static_cast<double>(i)) + "\" width=\"" + num(kCell) + "\" height=\"" + num(kCell) +
           "\" fill=\"" + shade(peak[i] > 0 ? m.value[k] / peak[i] : 0) + "\"/>\n";
    }
  for (size_t i = 0; i < nr; ++i)
    s += "<text x=\"" + num(left - 4) + "\" y=\"" + num(top + kCell * (static_cast<double>(i) + 0.75)) +
         "\" text-anchor=\"end\" font-size=\"10\"" + label_style(!m.row_marked.empty() && m.row_marked[i]) + ">" +
         xml_escape(short_label(m.rows[i])) + "</text>\n";
  for (size_t j = 0; j < nc; ++j) {
    const double x = left + kCell * (static_cast<double>(j) + 0.7), y = top - 4;
    s += "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\" font-size=\"10\" transform=\"rotate(-60 " + num(x) + " " +
         num(y) + ")\"" + label_style(!m.col_marked.empty() && m.col_marked[j]) + ">" +
         xml_escape(short_label(m.cols[j])) + "</text>\n";
  }
  return b;
}

// One bar per token, its height and shade the weight's share of the largest.
Block draw_strip(const Strip& st) {
  constexpr double kBar = 60;
  const double top = 22, left = 4, base = top + kBar;
  double peak = 0;
  for (double v : st.value)
    if (std::isfinite(v)) peak = std::max(peak, v);
  Block b;
  b.width = left + kCell * static_cast<double>(st.labels.size()) + 10;
  b.height = base + label_width(st.labels) * 0.87 + 12;
  std::string& s = b.svg;
  s += title_svg(st.title, "(tallest = " + fixed(peak, 3) + ")", b.width);
  s += "<line x1=\"" + num(left) + "\" y1=\"" + num(base) + "\" x2=\"" +
       num(left + kCell * static_cast<double>(st.labels.size())) + "\" y2=\"" + num(base) + "\" stroke=\"#888\"/>\n";
  for (size_t j = 0; j < st.labels.size(); ++j) {
    const double x = left + kCell * static_cast<double>(j);
    const double share = peak > 0 && std::isfinite(st.value[j]) ? std::clamp(st.value[j] / peak, 0.0, 1.0) : 0.0;
    s += "<rect x=\"" + num(x + 1) + "\" y=\"" + num(base - kBar * share) + "\" width=\"" + num(kCell - 2) +
         "\" height=\"" + num(kBar * share) + "\" fill=\"" + shade(0.25 + 0.75 * share) + "\"/>\n";
    const double tx = x + kCell * 0.3, ty = base + 8;
    s += "<text x=\"" + num(tx) + "\" y=\"" + num(ty) + "\" font-size=\"10\" transform=\"rotate(60 " + num(tx) + " " +
         num(ty) + ")\">" + xml_escape(short_label(st.labels[j])) + "</text>\n";
  }
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

Strip source2token_strip(const Explanation& e, int64_t feature) {
  return {"source2token weights (sentence readout, " + feature_note(feature) + ")", e.tokens,
          features_reduced(e.trace.get("source2token"), feature, "source2token")};
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
  Section s{"ReSAN: soft alignments (" + feature_note(feature) +
                ") among the tokens the hard attention (RSS) selected: red rows = selected heads, red columns = "
                "selected dependents; grey = masked",
            {}, {}};
  for (const char* dir : {"forward", "backward", "none"}) {
    if (!e.trace.has(std::string(dir) + ".alignment")) continue;
    Heatmap m = direction_map(e, dir, feature, [&](size_t i, size_t j) { return e.heads[i] && e.dependents[j]; });
    const auto count = [](const std::vector<int>& z) { return std::to_string(std::count(z.begin(), z.end(), 1)); };
    m.title += " (heads " + count(e.heads) + ", dependents " + count(e.dependents) + " of " +
               std::to_string(e.tokens.size()) + " tokens)";
    m.row_marked.assign(e.heads.begin(), e.heads.end());
    m.col_marked.assign(e.dependents.begin(), e.dependents.end());
    s.maps.push_back(std::move(m));
  }
  s.strips.push_back(source2token_strip(e, feature));
  out.push_back(std::move(s));
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
      names.push_back(std::to_string(b + 1) + ": " + e.tokens[b * r] + (last > b * r ? ".." + e.tokens[last] : ""));
    }
    Heatmap inter{dir + " inter-block", names, names, features_reduced(e.trace.get(dir + ".inter"), feature, dir + " inter-block"),
                  std::vector<char>(blocks * blocks, 0), {}, {}};
    for (size_t i = 0; i < blocks; ++i)
      for (size_t j = 0; j < blocks; ++j) inter.allowed[i * blocks + j] = direction_allows(dir, i, j);
    s.maps.push_back(std::move(inter));
  }
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

// Places blocks left to right, wrapping at the page width; returns the height used.
double place(const std::vector<Block>& blocks, double y, std::string& svg, double& width) {
  double x = 20, row_height = 0;
  for (const Block& b : blocks) {
    if (x > 20 && x + b.width > kPageWidth) {
      y += row_height + kGap;
      x = 20;
      row_height = 0;
    }
    svg += "<g transform=\"translate(" + num(x) + " " + num(y) + ")\">\n" + b.svg + "</g>\n";
    width = std::max(width, x + b.width + 20);
    x += b.width + kGap;
    row_height = std::max(row_height, b.height);
  }
  return y + row_height;
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
  ATTN_CHECK(f < 0 || e.encoder != "mstrans", "explain",
             "--feature picks a feature of multi-dimensional attention; mstrans's attention is one weight per pair");

  // Header: the sentence (wrapped), the note on truncation, the prediction.
  std::vector<std::string> header;
  std::string line = "sentence:";
  for (const std::string& t : e.tokens) {
    if (line.size() + t.size() > 150) {
      header.push_back(line);
      line = "  ";
    }
    line += " " + t;
  }
  header.push_back(line);
  if (e.truncated())
    header.push_back("(long sentence: the first " + std::to_string(e.tokens.size()) + " of its " +
                     std::to_string(e.original_length) + " tokens were given to the model and are shown)");
  std::string classes;
  for (size_t k = 0; k < e.labels.size(); ++k)
    classes += (k ? ", " : "") + std::string("p(") + e.labels[k] + ") = " + fixed(e.probabilities.at(k), 4);
  header.push_back("prediction: " + e.labels.at(static_cast<size_t>(e.predicted)) + " with probability " +
                   fixed(e.probabilities.at(static_cast<size_t>(e.predicted)), 4) + "   (" + classes + ")");
  if (sections.empty()) header.push_back("the " + e.encoder + " encoder records no attention weights to show");

  std::string body;
  double width = 900, y = 28;
  body += "<text x=\"20\" y=\"" + num(y) + "\" font-size=\"16\" font-weight=\"bold\">attn explain: " +
          xml_escape(e.encoder) + "</text>\n";
  for (const std::string& h : header) {
    y += 20;
    body += "<text x=\"20\" y=\"" + num(y) + "\" font-size=\"13\" xml:space=\"preserve\">" + xml_escape(h) + "</text>\n";
    width = std::max(width, 40 + 7.2 * static_cast<double>(h.size()));
  }
  for (const Section& s : sections) {
    y += 40;
    body += "<text x=\"20\" y=\"" + num(y) + "\" font-size=\"14\" font-weight=\"bold\" fill=\"#333\">" +
            xml_escape(s.title) + "</text>\n";
    width = std::max(width, 40 + 8.4 * static_cast<double>(s.title.size()));
    std::vector<Block> blocks;
    for (const Heatmap& m : s.maps) blocks.push_back(draw_heatmap(m));
    y = place(blocks, y + 16, body, width);
    blocks.clear();
    for (const Strip& st : s.strips) blocks.push_back(draw_strip(st));
    if (!blocks.empty()) y = place(blocks, y + kGap, body, width);
  }
  y += 30;
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(y) +
         "\" viewBox=\"0 0 " + num(width) + " " + num(y) + "\" font-family=\"sans-serif\">\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(y) + "\" fill=\"white\"/>\n";
  return out + body + "</svg>\n";
}

}  // namespace attn
