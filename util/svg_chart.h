// Line charts as a standalone SVG document, written by hand (no
// dependencies): side-by-side panels, each with axes, ticks, labels and one
// polyline (plus point markers) per series, and one legend for all panels.
#pragma once
#include <string>
#include <utility>
#include <vector>

namespace attn {

struct ChartSeries {
  std::string name;                              // shown in the legend
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  int color = 0;                                 // index into a fixed palette
  bool dashed = false;
};

struct ChartPanel {
  std::string title, x_label, y_label;
  std::vector<ChartSeries> series;
  bool log_y = false;  // logarithmic y axis (points with y <= 0 are left out)
};

// The whole SVG document. Series with the same name in several panels share
// one legend entry.
std::string render_svg_chart(const std::string& title, const std::vector<ChartPanel>& panels);

// Round tick positions covering [lo, hi] (about `target` of them): steps of
// 1, 2 or 5 times a power of ten.
std::vector<double> linear_ticks(double lo, double hi, int target = 6);
// Tick positions for a log axis over [lo, hi] (lo > 0): powers of ten, with
// 2 and 5 times them when the range spans few decades.
std::vector<double> log_ticks(double lo, double hi);

// Text with &, <, >, " escaped for XML; bytes that are not well-formed
// UTF-8 and control characters XML forbids become '?', so any input (a
// token from a spam e-mail) gives well-formed XML.
std::string xml_escape(const std::string& text);

}  // namespace attn
