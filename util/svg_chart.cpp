#include "attn/util/svg_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>

namespace attn {

namespace {

const char* const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22",
                                "#000000", "#98df8a"};
constexpr int kPaletteSize = sizeof(kPalette) / sizeof(kPalette[0]);

// Two panels are 900 px wide: the width a README shows the picture at.
constexpr double kPanelWidth = 450, kPanelHeight = 340;
constexpr double kLeft = 80, kRight = 18, kTop = 34, kBottom = 52;  // plot margins inside a panel
constexpr double kTitleHeight = 30;
constexpr double kTickFont = 13, kAxisFont = 13, kLegendFont = 13;

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

std::string tick_label(double v) {
  char buf[32];
  if (v != 0 && (std::fabs(v) >= 1e6 || std::fabs(v) < 1e-3)) std::snprintf(buf, sizeof buf, "%.0e", v);
  else std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

std::string attr_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

const char* color_of(int index) { return kPalette[((index % kPaletteSize) + kPaletteSize) % kPaletteSize]; }

struct Range {
  double lo = std::numeric_limits<double>::infinity(), hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  bool empty() const { return lo > hi; }
};

bool usable(const ChartPanel& panel, double y) { return std::isfinite(y) && (!panel.log_y || y > 0); }

// Draws one panel with its top-left corner at (ox, oy).
std::string render_panel(const ChartPanel& panel, double ox, double oy) {
  Range xr, yr;
  for (const ChartSeries& s : panel.series)
    for (const auto& [x, y] : s.points)
      if (std::isfinite(x) && usable(panel, y)) {
        xr.add(x);
        yr.add(y);
      }
  if (xr.empty()) {
    xr.add(0);
    xr.add(1);
    yr.add(panel.log_y ? 1 : 0);
    yr.add(panel.log_y ? 10 : 1);
  }
  if (panel.x_from_zero) xr.add(0);
  if (xr.hi == xr.lo) xr.hi = xr.lo + 1;

  std::vector<double> xt = linear_ticks(xr.lo, xr.hi);
  const double x0 = std::min(xr.lo, xt.front()), x1 = std::max(xr.hi, xt.back());
  std::vector<double> yt;
  double y0, y1;
  if (panel.log_y) {
    y0 = std::pow(10.0, std::floor(std::log10(yr.lo)));
    y1 = std::pow(10.0, std::ceil(std::log10(yr.hi)));
    if (y1 <= y0) y1 = y0 * 10;
    yt = log_ticks(y0, y1);
  } else {
    // The data's own range, so that small differences (accuracies of 0.80
    // to 0.95) are visible; a flat line gets a band around its value.
    const double spread = yr.hi - yr.lo;
    const double margin = spread > 0 ? 0.05 * spread : yr.lo != 0 ? 0.05 * std::fabs(yr.lo) : 0.5;
    y0 = yr.lo - margin;
    y1 = yr.hi + margin;
    if (yr.lo >= 0 && y0 < 0) y0 = 0;  // a loss or an accuracy never goes below 0
    yt = linear_ticks(y0, y1);
  }

  const double pl = ox + kLeft, pr = ox + kPanelWidth - kRight, pt = oy + kTop, pb = oy + kPanelHeight - kBottom;
  auto sx = [&](double x) { return pl + (x - x0) / (x1 - x0) * (pr - pl); };
  auto sy = [&](double y) {
    const double f = panel.log_y ? (std::log10(y) - std::log10(y0)) / (std::log10(y1) - std::log10(y0))
                                 : (y - y0) / (y1 - y0);
    return pb - f * (pb - pt);
  };

  std::string out = "<g class=\"panel\">\n";
  out += "<text x=\"" + num((pl + pr) / 2) + "\" y=\"" + num(oy + 20) +
         "\" text-anchor=\"middle\" font-size=\"15\" font-weight=\"bold\">" + xml_escape(panel.title) + "</text>\n";
  out += "<rect class=\"plot-area\" x=\"" + num(pl) + "\" y=\"" + num(pt) + "\" width=\"" + num(pr - pl) +
         "\" height=\"" + num(pb - pt) + "\" fill=\"none\" data-x-axis=\"" + attr_number(x0) + " " +
         attr_number(x1) + "\" data-y-axis=\"" + attr_number(y0) + " " + attr_number(y1) + "\"/>\n";
  // Grid and ticks.
  for (double t : xt) {
    if (t < x0 - 1e-9 || t > x1 + 1e-9) continue;
    const std::string x = num(sx(t));
    out += "<line x1=\"" + x + "\" y1=\"" + num(pt) + "\" x2=\"" + x + "\" y2=\"" + num(pb) +
           "\" stroke=\"#e6e6e6\"/>\n";
    out += "<line x1=\"" + x + "\" y1=\"" + num(pb) + "\" x2=\"" + x + "\" y2=\"" + num(pb + 5) +
           "\" stroke=\"black\"/>\n";
    out += "<text x=\"" + x + "\" y=\"" + num(pb + 19) + "\" text-anchor=\"middle\" font-size=\"" + num(kTickFont) + "\">" +
           tick_label(t) + "</text>\n";
  }
  for (double t : yt) {
    if (t < y0 * (1 - 1e-9) - 1e-12 || t > y1 * (1 + 1e-9) + 1e-12) continue;
    const std::string y = num(sy(t));
    out += "<line x1=\"" + num(pl) + "\" y1=\"" + y + "\" x2=\"" + num(pr) + "\" y2=\"" + y +
           "\" stroke=\"#e6e6e6\"/>\n";
    out += "<line x1=\"" + num(pl - 5) + "\" y1=\"" + y + "\" x2=\"" + num(pl) + "\" y2=\"" + y +
           "\" stroke=\"black\"/>\n";
    out += "<text x=\"" + num(pl - 8) + "\" y=\"" + num(sy(t) + 4) + "\" text-anchor=\"end\" font-size=\"" + num(kTickFont) + "\">" +
           tick_label(t) + "</text>\n";
  }
  // Axes and their labels.
  out += "<line x1=\"" + num(pl) + "\" y1=\"" + num(pb) + "\" x2=\"" + num(pr) + "\" y2=\"" + num(pb) +
         "\" stroke=\"black\"/>\n";
  out += "<line x1=\"" + num(pl) + "\" y1=\"" + num(pt) + "\" x2=\"" + num(pl) + "\" y2=\"" + num(pb) +
         "\" stroke=\"black\"/>\n";
  out += "<text x=\"" + num((pl + pr) / 2) + "\" y=\"" + num(pb + 42) +
         "\" text-anchor=\"middle\" font-size=\"" + num(kAxisFont) + "\">" + xml_escape(panel.x_label) + "</text>\n";
  const double ly = (pt + pb) / 2, lx = ox + 18;
  out += "<text x=\"" + num(lx) + "\" y=\"" + num(ly) + "\" text-anchor=\"middle\" font-size=\"" + num(kAxisFont) + "\" transform=\"rotate(-90 " +
         num(lx) + " " + num(ly) + ")\">" + xml_escape(panel.y_label) + "</text>\n";
  // One polyline and markers per series.
  for (const ChartSeries& s : panel.series) {
    std::string pts;
    std::string markers;
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !usable(panel, y)) continue;
      pts += (pts.empty() ? "" : " ") + num(sx(x)) + "," + num(sy(y));
      markers += "<circle cx=\"" + num(sx(x)) + "\" cy=\"" + num(sy(y)) + "\" r=\"2.5\" fill=\"" +
                 color_of(s.color) + "\"/>\n";
    }
    out += "<polyline data-series=\"" + xml_escape(s.name) + "\" fill=\"none\" stroke=\"" + color_of(s.color) +
           "\" stroke-width=\"1.8\"" + (s.dashed ? " stroke-dasharray=\"6,4\"" : "") + " points=\"" + pts +
           "\"/>\n";
    out += markers;
  }
  out += "</g>\n";
  return out;
}

}  // namespace

std::vector<double> linear_ticks(double lo, double hi, int target) {
  if (!(hi > lo)) hi = lo + 1;
  const double raw = (hi - lo) / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  const double first = std::floor(lo / step + 1e-9) * step, last = std::ceil(hi / step - 1e-9) * step;
  for (double t = first; t <= last + step * 1e-6; t += step) ticks.push_back(std::fabs(t) < step * 1e-9 ? 0.0 : t);
  return ticks;
}

std::vector<double> log_ticks(double lo, double hi) {
  std::vector<double> ticks;
  const int first = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
  const int last = static_cast<int>(std::ceil(std::log10(hi) - 1e-9));
  const bool fine = last - first <= 3;
  for (int e = first; e <= last; ++e) {
    const double p = std::pow(10.0, e);
    for (double m : {1.0, 2.0, 5.0}) {
      if (m != 1.0 && !fine) continue;
      const double t = m * p;
      if (t >= lo * (1 - 1e-9) && t <= hi * (1 + 1e-9)) ticks.push_back(t);
    }
  }
  return ticks;
}

namespace {
// Length of the well-formed UTF-8 sequence starting at text[i] (1-4), or 0.
size_t utf8_sequence_length(const std::string& text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  size_t len = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3 : (lead >> 3) == 0x1E ? 4 : 0;
  if (len == 0 || i + len > text.size()) return 0;
  for (size_t k = 1; k < len; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  // Overlong forms, surrogates and code points past U+10FFFF are not characters either.
  if (len == 2 && lead < 0xC2) return 0;
  if (len == 3 && ((lead == 0xE0 && byte(i + 1) < 0xA0) || (lead == 0xED && byte(i + 1) >= 0xA0))) return 0;
  if (len == 4 && ((lead == 0xF0 && byte(i + 1) < 0x90) || lead > 0xF4 || (lead == 0xF4 && byte(i + 1) >= 0x90)))
    return 0;
  return len;
}
}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size();) {
    const size_t len = utf8_sequence_length(text, i);
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (len == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r')) {
      out += '?';  // not a character XML 1.0 allows
      i += std::max<size_t>(len, 1);
      continue;
    }
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out.append(text, i, len);
    }
    i += len;
  }
  return out;
}

double estimated_text_width(const std::string& text, double font_size, bool bold) {
  // Average advances of a sans-serif face (DejaVu Sans, what Chromium and
  // librsvg fall back to here): about 0.56 em per Latin character, bold a
  // little wider, and a full em for the wide scripts (three- and four-byte
  // UTF-8: CJK, emoji). Over rather than under: text wraps a little early
  // instead of running out of the picture.
  double ems = 0;
  for (unsigned char c : text) {
    if ((c & 0xC0) == 0x80) continue;  // a continuation byte: same character
    ems += c >= 0xE0 ? 1.0 : bold ? 0.64 : 0.56;
  }
  return ems * font_size;
}

std::vector<std::string> wrap_text(const std::string& text, double max_width, double font_size, bool bold) {
  std::vector<std::string> lines;
  std::string line;
  size_t at = 0;
  while (at < text.size()) {
    const size_t space = text.find(' ', at);
    const std::string word = text.substr(at, space == std::string::npos ? std::string::npos : space - at);
    at = space == std::string::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    const std::string joined = line.empty() ? word : line + " " + word;
    if (!line.empty() && estimated_text_width(joined, font_size, bold) > max_width) {
      lines.push_back(line);
      line = word;  // a word wider than the line stays whole on a line of its own
    } else {
      line = joined;
    }
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string render_svg_chart(const std::string& title, const std::vector<ChartPanel>& panels, size_t columns) {
  const size_t n = std::max<size_t>(1, panels.size());
  const size_t per_row = columns == 0 ? n : std::min(columns, n);
  const size_t rows = (n + per_row - 1) / per_row;
  const double width = kPanelWidth * static_cast<double>(per_row);
  const double panels_height = kPanelHeight * static_cast<double>(rows);
  // The legend: every distinct series name once, in first-seen order, laid
  // out in rows under the panels (beside them it would cost a fifth of the
  // width the panels need).
  std::vector<const ChartSeries*> legend;
  std::set<std::string> seen;
  for (const ChartPanel& p : panels)
    for (const ChartSeries& s : p.series)
      if (seen.insert(s.name).second) legend.push_back(&s);
  std::string entries;
  const double first_x = kLeft, row_height = 22;
  double x = first_x, y = kTitleHeight + panels_height + 14;
  for (const ChartSeries* s : legend) {
    const double entry = 34 + estimated_text_width(s->name, kLegendFont, false) + 24;
    if (x > first_x && x + entry > width - kRight) {
      x = first_x;
      y += row_height;
    }
    entries += "<line x1=\"" + num(x) + "\" y1=\"" + num(y) + "\" x2=\"" + num(x + 28) + "\" y2=\"" + num(y) +
               "\" stroke=\"" + color_of(s->color) + "\" stroke-width=\"2.5\"" +
               (s->dashed ? " stroke-dasharray=\"6,4\"" : "") + "/>\n";
    entries += "<text x=\"" + num(x + 34) + "\" y=\"" + num(y + 4.5) + "\" font-size=\"" + num(kLegendFont) + "\">" +
               xml_escape(s->name) + "</text>\n";
    x += entry;
  }
  const double height = (legend.empty() ? kTitleHeight + panels_height : y + row_height) + 6;

  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(width) + "\" height=\"" + num(height) +
         "\" viewBox=\"0 0 " + num(width) + " " + num(height) + "\" font-family=\"sans-serif\">\n";
  out += "<rect x=\"0\" y=\"0\" width=\"" + num(width) + "\" height=\"" + num(height) + "\" fill=\"white\"/>\n";
  out += "<text x=\"" + num(width / 2) + "\" y=\"21\" text-anchor=\"middle\" font-size=\"17\">" + xml_escape(title) +
         "</text>\n";
  for (size_t i = 0; i < panels.size(); ++i)
    out += render_panel(panels[i], kPanelWidth * static_cast<double>(i % per_row),
                        kTitleHeight + kPanelHeight * static_cast<double>(i / per_row));
  out += "<g class=\"legend\">\n" + entries + "</g>\n</svg>\n";
  return out;
}

}  // namespace attn
