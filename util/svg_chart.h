// Line charts as a standalone SVG document, written by hand (no
// dependencies): side-by-side panels, each with axes, ticks, labels and one
// polyline (plus point markers) per series, and one legend for all panels
// below them. Two panels make a picture 900 px wide, the width a README
// shows it at, so the type sizes in the code are the sizes a reader sees.
#pragma once
#include <cstddef>
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
  // The x axis starts at 0 whatever the data (training steps: the reader
  // sees where training began even when the first point is later).
  bool x_from_zero = false;
};

// The whole SVG document. Series with the same name in several panels share
// one legend entry. A linear y axis spans the data plus a margin of 5% of
// its spread (not down to 0: accuracies between 0.80 and 0.95 fill the
// panel), never below 0 for data that is all >= 0. Each panel's plot area is
// a <rect class="plot-area"> whose data-x-axis and data-y-axis attributes
// hold the axis ranges ("lo hi"). The panels fill rows of `columns` (0: one
// row of all of them), left to right, then top to bottom.
std::string render_svg_chart(const std::string& title, const std::vector<ChartPanel>& panels, size_t columns = 0);

// Round tick positions covering [lo, hi] (about `target` of them): steps of
// 1, 2 or 5 times a power of ten.
std::vector<double> linear_ticks(double lo, double hi, int target = 6);
// Tick positions for a log axis over [lo, hi] (lo > 0): powers of ten, with
// 2 and 5 times them when the range spans few decades.
std::vector<double> log_ticks(double lo, double hi);

// The width `text` is expected to take at `font_size` px in a sans-serif
// face (an estimate from the character count: SVG has no text measuring),
// for laying out text before a renderer sees it.
double estimated_text_width(const std::string& text, double font_size, bool bold = false);
// `text` broken at spaces into lines of at most max_width px (estimated); a
// word wider than that is kept whole on a line of its own.
std::vector<std::string> wrap_text(const std::string& text, double max_width, double font_size, bool bold = false);

// Text with &, <, >, " escaped for XML; bytes that are not well-formed
// UTF-8 and control characters XML forbids become '?', so any input (a
// token from a spam e-mail) gives well-formed XML.
std::string xml_escape(const std::string& text);

}  // namespace attn
