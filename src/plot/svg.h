// SVG figures without any plotting library: heatmaps (matrix as an embedded palette PNG, axes with
// ticks, title, colour bar; diverging blue-white-red centred at 0 for signed data) and line charts
// (several series, markers for sparse series, legend, axis labels, optional log y), laid out alone
// or as a grid of small multiples (e.g. one panel per attention head) with an optional shared
// legend. Torch-free; used by `tisa-train analyze` and `tisa-train plot`.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "plot/png.h"

namespace tisa::plot {

enum class Colormap {
  kAuto,        // diverging when the finite values have both signs, else sequential
  kDiverging,   // blue (−m) · white (0) · red (+m), m = max |value|
  kSequential,  // dark blue → green → yellow (viridis-like), from min to max
};

struct Heatmap {
  std::string title;
  std::string x_label = "j";
  std::string y_label = "i";
  std::string colorbar_label;
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> values;        // row-major rows·cols; row 0 is drawn at the top; NaN grey
  Colormap colormap = Colormap::kAuto;
  double x_first = 0;                // axis value of column 0 (tick labels)
  double y_first = 0;                // axis value of row 0
  // Matrices larger than this per side are shown as block means (the numbers in analysis.json
  // stay exact); keeps SVG files small.
  int64_t max_cells = 512;
};

struct Series {
  std::string name;
  std::vector<double> x;
  std::vector<double> y;   // same length as x; a non-finite y breaks the line
  std::string color;       // CSS colour; empty = the figure palette by series index
  bool dashed = false;
};

struct LineChart {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<Series> series;
  bool legend = true;               // legend to the right of the plot area (when any series is named)
  bool log_y = false;               // logarithmic y axis (non-positive values are skipped)
  std::optional<double> y_min;      // fixed y range ends (e.g. τ in [0, 1]); default from the data
  std::optional<double> y_max;
  std::optional<double> x_min;
  std::optional<double> x_max;
};

// A forest plot: one row per labelled estimate with its interval (e.g. the difference of a
// variant from a baseline with its 95 % bootstrap interval), a vertical reference line (0), and
// highlighted rows (significant ones). Rows are drawn top to bottom in order.
struct IntervalRow {
  std::string label;
  double estimate = 0;
  double low = 0;
  double high = 0;
  bool highlight = false;  // drawn in colour (red when the estimate is > reference, else blue)
};

struct IntervalChart {
  std::string title;
  std::string x_label;
  std::vector<IntervalRow> rows;  // non-finite rows are listed with "n/a"
  double reference = 0;
};

using Panel = std::variant<Heatmap, LineChart, IntervalChart>;

struct LegendEntry {
  std::string name;
  std::string color;
  bool dashed = false;
};

struct Figure {
  std::string title;
  std::vector<Panel> panels;
  int columns = 0;                   // 0 = ceil(sqrt(panels))
  double panel_width = 420;
  double panel_height = 320;
  std::vector<LegendEntry> legend;   // shared legend drawn under the title (panels may omit theirs)
};

// A whole SVG document.
std::string render_svg(const Figure& figure);
std::string render_svg(const Heatmap& heatmap, double width = 600, double height = 520);
std::string render_svg(const LineChart& chart, double width = 640, double height = 400);
std::string render_svg(const IntervalChart& chart, double width = 480, double height = 360);

// Writes render_svg(...) atomically to `path`.
void write_svg(const std::string& path, const Figure& figure);
void write_svg(const std::string& path, const Heatmap& heatmap);
void write_svg(const std::string& path, const LineChart& chart);

// A heatmap as a stand-alone PNG (one pixel per cell scaled up by `scale`, no axes).
std::string heatmap_png(const Heatmap& heatmap, int scale = 1);

// --- pieces exposed for tests and other plots
Rgb diverging_color(double t);   // t ∈ [−1, 1]: −1 blue, 0 white, +1 red (clamped)
Rgb sequential_color(double t);  // t ∈ [0, 1] (clamped)
std::string palette_color(size_t index);  // categorical colours for series (10, then repeats)
// About `target` round tick values (1, 2, 5 × 10^k steps) inside [lo, hi].
std::vector<double> nice_ticks(double lo, double hi, int target = 5);
// Tick label: the fewest decimals that tell ticks `step` apart; %g for very large/small values.
std::string format_tick(double value, double step);
// Escapes & < > " ' for XML text and attributes.
std::string xml_escape(const std::string& text);

}  // namespace tisa::plot
