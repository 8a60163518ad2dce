// SVG rendering of heatmaps, line charts and grids of them (see svg.h). Coordinates are in SVG
// user units (= CSS pixels); every panel is drawn inside its own <g transform="translate(..)">
// box of panel_width × panel_height, so one renderer serves single plots and small multiples.
#include "plot/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "common/error.h"
#include "common/fs.h"

namespace tisa::plot {
namespace {

constexpr double kFont = 12;          // tick labels, axis labels
constexpr double kTitleFont = 14;
constexpr double kCharWidth = 0.6;    // average glyph width / font size (sans-serif estimate)
const char* kFontFamily = "DejaVu Sans, Helvetica, Arial, sans-serif";

double text_width(const std::string& text, double font) {
  // UTF-8 continuation bytes do not start a glyph.
  size_t glyphs = 0;
  for (unsigned char c : text) glyphs += (c & 0xc0) != 0x80;
  return static_cast<double>(glyphs) * font * kCharWidth;
}

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  // Trim trailing zeros: "12.50" -> "12.5", "3.00" -> "3".
  std::string s(buf);
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  if (s == "-0") s = "0";
  return s;
}

std::string rgb_hex(const Rgb& c) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

Rgb lerp(const Rgb& a, const Rgb& b, double t) {
  auto mix = [t](uint8_t x, uint8_t y) {
    return static_cast<uint8_t>(std::lround(x + (static_cast<double>(y) - x) * t));
  };
  return {mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b)};
}

// Piecewise-linear colour ramp through `stops` (equally spaced on [0, 1]).
Rgb ramp(const std::vector<Rgb>& stops, double t) {
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0);
  double pos = t * static_cast<double>(stops.size() - 1);
  size_t i = std::min(stops.size() - 2, static_cast<size_t>(pos));
  return lerp(stops[i], stops[i + 1], pos - static_cast<double>(i));
}

// Text element; anchor is start|middle|end; rotate in degrees about (x, y).
void text(std::ostringstream& out, double x, double y, const std::string& s, double font,
          const char* anchor = "middle", double rotate = 0, bool bold = false) {
  out << "<text x=\"" << num(x) << "\" y=\"" << num(y) << "\" font-size=\"" << num(font)
      << "\" text-anchor=\"" << anchor << "\"";
  if (bold) out << " font-weight=\"bold\"";
  if (rotate != 0) out << " transform=\"rotate(" << num(rotate) << " " << num(x) << " " << num(y) << ")\"";
  out << ">" << xml_escape(s) << "</text>\n";
}

void line(std::ostringstream& out, double x1, double y1, double x2, double y2, const char* stroke,
          double width = 1) {
  out << "<line x1=\"" << num(x1) << "\" y1=\"" << num(y1) << "\" x2=\"" << num(x2) << "\" y2=\""
      << num(y2) << "\" stroke=\"" << stroke << "\" stroke-width=\"" << num(width) << "\"/>\n";
}

struct Box {
  double x, y, w, h;  // plot area inside a panel
};

// Unique ids (clip paths, gradients) inside one document.
struct Context {
  int next_id = 0;
  std::string id(const char* prefix) { return std::string(prefix) + std::to_string(next_id++); }
};

// --------------------------------------------------------------------------------- heatmap
struct ColourScale {
  Colormap map;
  double lo, hi;  // value range mapped to the ends of the ramp
  Rgb color(double v) const {
    if (!std::isfinite(v)) return {200, 200, 200};
    if (map == Colormap::kDiverging) return diverging_color(hi > 0 ? v / hi : 0.0);
    return sequential_color(hi > lo ? (v - lo) / (hi - lo) : 0.5);
  }
};

ColourScale make_scale(const Heatmap& h) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double v : h.values)
    if (std::isfinite(v)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) lo = hi = 0;
  Colormap map = h.colormap;
  if (map == Colormap::kAuto) map = (lo < 0 && hi > 0) ? Colormap::kDiverging : Colormap::kSequential;
  if (map == Colormap::kDiverging) {
    double m = std::max(std::abs(lo), std::abs(hi));
    return {map, -m, m};
  }
  return {map, lo, hi};
}

void check_heatmap(const Heatmap& h) {
  if (h.rows <= 0 || h.cols <= 0 || h.values.size() != static_cast<size_t>(h.rows * h.cols))
    throw Error("heatmap '" + h.title + "': " + std::to_string(h.values.size()) + " values for " +
                std::to_string(h.rows) + "x" + std::to_string(h.cols) + " cells");
}

// The matrix shown (block means when larger than max_cells per side).
struct Shown {
  int64_t rows, cols, block;
  std::vector<double> values;
};

Shown shown_cells(const Heatmap& h) {
  int64_t side = std::max(h.rows, h.cols);
  int64_t block = h.max_cells > 0 ? (side + h.max_cells - 1) / h.max_cells : 1;
  block = std::max<int64_t>(1, block);
  Shown s{(h.rows + block - 1) / block, (h.cols + block - 1) / block, block, {}};
  s.values.assign(static_cast<size_t>(s.rows * s.cols), 0.0);
  std::vector<int64_t> counts(s.values.size(), 0);
  for (int64_t i = 0; i < h.rows; ++i)
    for (int64_t j = 0; j < h.cols; ++j) {
      size_t k = static_cast<size_t>((i / block) * s.cols + j / block);
      s.values[k] += h.values[static_cast<size_t>(i * h.cols + j)];  // NaN propagates: grey block
      ++counts[k];
    }
  for (size_t k = 0; k < s.values.size(); ++k) s.values[k] /= static_cast<double>(counts[k]);
  return s;
}

std::string heatmap_png_of(const Shown& s, const ColourScale& scale, int repeat) {
  // Palette: 254 ramp colours + grey for NaN.
  std::vector<Rgb> palette;
  const int kLevels = 255;
  for (int i = 0; i < kLevels; ++i) {
    double t = static_cast<double>(i) / (kLevels - 1);
    palette.push_back(scale.color(scale.lo + t * (scale.hi - scale.lo)));
  }
  palette.push_back({200, 200, 200});
  int width = static_cast<int>(s.cols) * repeat, height = static_cast<int>(s.rows) * repeat;
  std::vector<uint8_t> idx(static_cast<size_t>(width) * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      double v = s.values[static_cast<size_t>((y / repeat) * s.cols + x / repeat)];
      uint8_t k;
      if (!std::isfinite(v)) {
        k = kLevels;
      } else {
        double t = scale.hi > scale.lo ? (v - scale.lo) / (scale.hi - scale.lo) : 0.5;
        k = static_cast<uint8_t>(std::lround(std::clamp(t, 0.0, 1.0) * (kLevels - 1)));
      }
      idx[static_cast<size_t>(y) * width + x] = k;
    }
  return encode_png_indexed(width, height, idx, palette);
}

// Ticks on an index axis [first, first + count − 1], at cell centres.
void heatmap_axis_ticks(std::ostringstream& out, bool horizontal, const Box& box, int64_t count,
                        double first, double cell) {
  double lo = first, hi = first + static_cast<double>(count - 1);
  auto ticks = nice_ticks(lo, hi, horizontal ? 5 : 5);
  double step = ticks.size() > 1 ? ticks[1] - ticks[0] : 1;
  for (double t : ticks) {
    if (std::abs(t - std::round(t)) > 1e-9) continue;  // indices are integers
    double offset = (t - first + 0.5) * cell;
    if (horizontal) {
      double x = box.x + offset;
      line(out, x, box.y + box.h, x, box.y + box.h + 4, "#333");
      text(out, x, box.y + box.h + 4 + kFont, format_tick(t, step), kFont);
    } else {
      double y = box.y + offset;
      line(out, box.x - 4, y, box.x, y, "#333");
      text(out, box.x - 6, y + kFont * 0.35, format_tick(t, step), kFont, "end");
    }
  }
}

void draw_heatmap(std::ostringstream& out, Context& ctx, const Heatmap& h, double width, double height) {
  check_heatmap(h);
  ColourScale scale = make_scale(h);
  Shown s = shown_cells(h);
  // Layout: title on top, y tick labels left, colour bar right, x ticks and label below.
  double left = 58, right = h.colorbar_label.empty() ? 92 : 112, top = h.title.empty() ? 12 : 30, bottom = 44;
  double area_w = std::max(10.0, width - left - right), area_h = std::max(10.0, height - top - bottom);
  double cell = std::min(area_w / static_cast<double>(h.cols), area_h / static_cast<double>(h.rows));
  Box box{left + (area_w - cell * h.cols) / 2, top, cell * h.cols, cell * h.rows};

  if (!h.title.empty()) text(out, width / 2, 19, h.title, kTitleFont, "middle", 0, true);
  // Small matrices: repeat pixels so that viewers that smooth scaled images stay crisp.
  int repeat = static_cast<int>(std::clamp(256 / std::max<int64_t>(1, std::max(s.rows, s.cols)),
                                           int64_t{1}, int64_t{32}));
  std::string png = heatmap_png_of(s, scale, repeat);
  out << "<image x=\"" << num(box.x) << "\" y=\"" << num(box.y) << "\" width=\"" << num(box.w)
      << "\" height=\"" << num(box.h) << "\" preserveAspectRatio=\"none\" image-rendering=\"pixelated\""
      << " style=\"image-rendering:pixelated;image-rendering:crisp-edges\" href=\"data:image/png;base64,"
      << base64_encode(png) << "\"/>\n";
  out << "<rect x=\"" << num(box.x) << "\" y=\"" << num(box.y) << "\" width=\"" << num(box.w)
      << "\" height=\"" << num(box.h) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  heatmap_axis_ticks(out, true, box, h.cols, h.x_first, cell);
  heatmap_axis_ticks(out, false, box, h.rows, h.y_first, cell);
  if (!h.x_label.empty()) text(out, box.x + box.w / 2, box.y + box.h + 34, h.x_label, kFont);
  if (!h.y_label.empty()) text(out, box.x - 44, box.y + box.h / 2, h.y_label, kFont, "middle", -90);

  // Colour bar: a vertical gradient with ticks on its right.
  double bx = box.x + box.w + 14, bw = 12, by = box.y, bh = box.h;
  std::string gid = ctx.id("cbar");
  out << "<defs><linearGradient id=\"" << gid << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
  for (int i = 0; i <= 16; ++i) {
    double t = i / 16.0;
    out << "<stop offset=\"" << num(t) << "\" stop-color=\""
        << rgb_hex(scale.color(scale.lo + t * (scale.hi - scale.lo))) << "\"/>";
  }
  out << "</linearGradient></defs>\n";
  out << "<rect x=\"" << num(bx) << "\" y=\"" << num(by) << "\" width=\"" << num(bw) << "\" height=\""
      << num(bh) << "\" fill=\"url(#" << gid << ")\" stroke=\"#333\"/>\n";
  if (scale.hi > scale.lo) {
    auto ticks = nice_ticks(scale.lo, scale.hi, 5);
    double step = ticks.size() > 1 ? ticks[1] - ticks[0] : scale.hi - scale.lo;
    for (double t : ticks) {
      double y = by + bh - (t - scale.lo) / (scale.hi - scale.lo) * bh;
      line(out, bx + bw, y, bx + bw + 4, y, "#333");
      text(out, bx + bw + 6, y + kFont * 0.35, format_tick(t, step), kFont, "start");
    }
  } else {
    text(out, bx + bw + 6, by + bh / 2, format_tick(scale.lo, 1), kFont, "start");
  }
  if (!h.colorbar_label.empty())
    text(out, bx + bw + 62, by + bh / 2, h.colorbar_label, kFont, "middle", 90);
  if (s.block > 1)
    text(out, width - 4, height - 4, "shown as " + std::to_string(s.block) + "x" + std::to_string(s.block) + " block means",
         kFont * 0.8, "end");
}

// ------------------------------------------------------------------------------ line chart
struct Range {
  double lo, hi;
};

double to_axis(double v, bool log) { return log ? std::log10(v) : v; }

void draw_legend(std::ostringstream& out, double x, double y, const std::vector<LegendEntry>& entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    double yy = y + static_cast<double>(i) * (kFont + 6);
    out << "<line x1=\"" << num(x) << "\" y1=\"" << num(yy) << "\" x2=\"" << num(x + 22) << "\" y2=\""
        << num(yy) << "\" stroke=\"" << entries[i].color << "\" stroke-width=\"2\""
        << (entries[i].dashed ? " stroke-dasharray=\"5 3\"" : "") << "/>\n";
    text(out, x + 28, yy + kFont * 0.35, entries[i].name, kFont, "start");
  }
}

std::vector<LegendEntry> legend_of(const LineChart& c) {
  std::vector<LegendEntry> entries;
  for (size_t i = 0; i < c.series.size(); ++i) {
    const Series& s = c.series[i];
    if (s.name.empty()) continue;
    entries.push_back({s.name, s.color.empty() ? palette_color(i) : s.color, s.dashed});
  }
  return entries;
}

double legend_width(const std::vector<LegendEntry>& entries) {
  double w = 0;
  for (const auto& e : entries) w = std::max(w, 28 + text_width(e.name, kFont));
  return w;
}

void draw_line_chart(std::ostringstream& out, Context& ctx, const LineChart& c, double width, double height) {
  for (const Series& s : c.series)
    if (s.x.size() != s.y.size())
      throw Error("line chart '" + c.title + "', series '" + s.name + "': " + std::to_string(s.x.size()) +
                  " x values but " + std::to_string(s.y.size()) + " y values");
  auto entries = c.legend ? legend_of(c) : std::vector<LegendEntry>{};
  double legend_w = entries.empty() ? 0 : std::min(width * 0.45, legend_width(entries) + 12);
  double left = 64, right = 14 + legend_w, top = c.title.empty() ? 12 : 30, bottom = 44;
  Box box{left, top, std::max(10.0, width - left - right), std::max(10.0, height - top - bottom)};
  if (!c.title.empty()) text(out, width / 2, 19, c.title, kTitleFont, "middle", 0, true);

  // Data ranges (finite points; log axes skip non-positive y).
  Range xr{std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  Range yr = xr;
  for (const Series& s : c.series)
    for (size_t i = 0; i < s.x.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (c.log_y && s.y[i] <= 0)) continue;
      xr.lo = std::min(xr.lo, s.x[i]), xr.hi = std::max(xr.hi, s.x[i]);
      double y = to_axis(s.y[i], c.log_y);
      yr.lo = std::min(yr.lo, y), yr.hi = std::max(yr.hi, y);
    }
  bool empty = !std::isfinite(xr.lo);
  if (empty) xr = {0, 1}, yr = {0, 1};
  if (c.x_min) xr.lo = *c.x_min;
  if (c.x_max) xr.hi = *c.x_max;
  if (c.y_min) yr.lo = to_axis(*c.y_min, c.log_y);
  if (c.y_max) yr.hi = to_axis(*c.y_max, c.log_y);
  if (xr.hi <= xr.lo) xr = {xr.lo - 0.5, xr.lo + 0.5};
  if (yr.hi <= yr.lo) {
    double pad = std::max(1e-12, std::abs(yr.lo) * 0.05);
    yr = {yr.lo - pad, yr.hi + pad};
  }
  if (!c.y_min || !c.y_max) {  // 4% margin on free ends so lines do not touch the frame
    double pad = 0.04 * (yr.hi - yr.lo);
    if (!c.y_min) yr.lo -= pad;
    if (!c.y_max) yr.hi += pad;
  }
  auto px = [&](double x) { return box.x + (x - xr.lo) / (xr.hi - xr.lo) * box.w; };
  auto py = [&](double y) { return box.y + box.h - (y - yr.lo) / (yr.hi - yr.lo) * box.h; };

  // Grid and ticks.
  auto xt = nice_ticks(xr.lo, xr.hi, std::max(3, static_cast<int>(box.w / 70)));
  double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;
  for (double t : xt) {
    double x = px(t);
    line(out, x, box.y, x, box.y + box.h, "#e5e5e5");
    line(out, x, box.y + box.h, x, box.y + box.h + 4, "#333");
    text(out, x, box.y + box.h + 4 + kFont, format_tick(t, xstep), kFont);
  }
  std::vector<double> yt;
  if (c.log_y) {
    for (double e = std::ceil(yr.lo); e <= std::floor(yr.hi) + 1e-9; e += 1) yt.push_back(e);
    if (yt.size() < 2) yt = nice_ticks(yr.lo, yr.hi, 4);
  } else {
    yt = nice_ticks(yr.lo, yr.hi, std::max(2, static_cast<int>(box.h / 50)));
  }
  double ystep = yt.size() > 1 ? yt[1] - yt[0] : 1;
  for (double t : yt) {
    double y = py(t);
    line(out, box.x, y, box.x + box.w, y, "#e5e5e5");
    line(out, box.x - 4, y, box.x, y, "#333");
    std::string label = c.log_y ? format_tick(std::pow(10.0, t), std::pow(10.0, t) / 10) : format_tick(t, ystep);
    text(out, box.x - 6, y + kFont * 0.35, label, kFont, "end");
  }
  if (!empty && !c.log_y && yr.lo < 0 && yr.hi > 0) line(out, box.x, py(0), box.x + box.w, py(0), "#999");

  // Series, clipped to the plot area.
  std::string clip = ctx.id("clip");
  out << "<defs><clipPath id=\"" << clip << "\"><rect x=\"" << num(box.x) << "\" y=\"" << num(box.y)
      << "\" width=\"" << num(box.w) << "\" height=\"" << num(box.h) << "\"/></clipPath></defs>\n";
  out << "<g clip-path=\"url(#" << clip << ")\" fill=\"none\">\n";
  for (size_t si = 0; si < c.series.size(); ++si) {
    const Series& s = c.series[si];
    std::string colour = s.color.empty() ? palette_color(si) : s.color;
    size_t finite = 0;
    std::vector<std::vector<std::pair<double, double>>> parts(1);
    for (size_t i = 0; i < s.x.size(); ++i) {
      bool ok = std::isfinite(s.x[i]) && std::isfinite(s.y[i]) && !(c.log_y && s.y[i] <= 0);
      if (!ok) {
        if (!parts.back().empty()) parts.emplace_back();
        continue;
      }
      ++finite;
      parts.back().emplace_back(px(s.x[i]), py(to_axis(s.y[i], c.log_y)));
    }
    for (const auto& part : parts) {
      if (part.size() < 2) continue;
      out << "<polyline stroke=\"" << colour << "\" stroke-width=\"1.6\" stroke-linejoin=\"round\""
          << (s.dashed ? " stroke-dasharray=\"5 3\"" : "") << " points=\"";
      for (const auto& [x, y] : part) out << num(x) << "," << num(y) << " ";
      out << "\"/>\n";
    }
    if (finite <= 40)  // sparse series (evaluations): mark each point
      for (const auto& part : parts)
        for (const auto& [x, y] : part)
          out << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"2.5\" fill=\"" << colour << "\"/>\n";
  }
  out << "</g>\n";
  out << "<rect x=\"" << num(box.x) << "\" y=\"" << num(box.y) << "\" width=\"" << num(box.w)
      << "\" height=\"" << num(box.h) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  if (empty) text(out, box.x + box.w / 2, box.y + box.h / 2, "no data", kFont);
  if (!c.x_label.empty()) text(out, box.x + box.w / 2, box.y + box.h + 34, c.x_label, kFont);
  if (!c.y_label.empty()) text(out, 14, box.y + box.h / 2, c.y_label, kFont, "middle", -90);
  if (!entries.empty()) draw_legend(out, box.x + box.w + 12, box.y + 8, entries);
}

// ------------------------------------------------------------------------------ interval chart
void draw_interval_chart(std::ostringstream& out, const IntervalChart& c, double width, double height) {
  double label_w = 0;
  for (const auto& r : c.rows) label_w = std::max(label_w, text_width(r.label, kFont));
  double left = 12 + label_w + 8, right = 14, top = c.title.empty() ? 12 : 30, bottom = 44;
  Box box{left, top, std::max(10.0, width - left - right), std::max(10.0, height - top - bottom)};
  if (!c.title.empty()) text(out, width / 2, 19, c.title, kTitleFont, "middle", 0, true);

  Range xr{c.reference, c.reference};
  for (const auto& r : c.rows)
    for (double v : {r.estimate, r.low, r.high})
      if (std::isfinite(v)) xr.lo = std::min(xr.lo, v), xr.hi = std::max(xr.hi, v);
  if (xr.hi <= xr.lo) xr = {xr.lo - 0.5, xr.lo + 0.5};
  const double pad = 0.05 * (xr.hi - xr.lo);
  xr = {xr.lo - pad, xr.hi + pad};
  auto px = [&](double x) { return box.x + (x - xr.lo) / (xr.hi - xr.lo) * box.w; };
  const double row_h = box.h / static_cast<double>(std::max<size_t>(1, c.rows.size()));
  auto py = [&](size_t i) { return box.y + (static_cast<double>(i) + 0.5) * row_h; };

  auto xt = nice_ticks(xr.lo, xr.hi, std::max(3, static_cast<int>(box.w / 70)));
  const double xstep = xt.size() > 1 ? xt[1] - xt[0] : 1;
  for (double t : xt) {
    const double x = px(t);
    line(out, x, box.y, x, box.y + box.h, "#e5e5e5");
    line(out, x, box.y + box.h, x, box.y + box.h + 4, "#333");
    text(out, x, box.y + box.h + 4 + kFont, format_tick(t, xstep), kFont);
  }
  line(out, px(c.reference), box.y, px(c.reference), box.y + box.h, "#777", 1.2);
  for (size_t i = 0; i < c.rows.size(); ++i) {
    const IntervalRow& r = c.rows[i];
    const double y = py(i);
    text(out, box.x - 8, y + kFont * 0.35, r.label, kFont, "end");
    if (!std::isfinite(r.estimate) || !std::isfinite(r.low) || !std::isfinite(r.high)) {
      text(out, box.x + 6, y + kFont * 0.35, "n/a", kFont, "start");
      continue;
    }
    const char* colour = !r.highlight ? "#555" : r.estimate > c.reference ? "#c0392b" : "#2563b0";
    line(out, px(r.low), y, px(r.high), y, colour, 2);
    line(out, px(r.low), y - 4, px(r.low), y + 4, colour, 1.5);
    line(out, px(r.high), y - 4, px(r.high), y + 4, colour, 1.5);
    out << "<circle cx=\"" << num(px(r.estimate)) << "\" cy=\"" << num(y) << "\" r=\"3.5\" fill=\"" << colour
        << "\"/>\n";
  }
  out << "<rect x=\"" << num(box.x) << "\" y=\"" << num(box.y) << "\" width=\"" << num(box.w)
      << "\" height=\"" << num(box.h) << "\" fill=\"none\" stroke=\"#333\"/>\n";
  if (!c.x_label.empty()) text(out, box.x + box.w / 2, box.y + box.h + 34, c.x_label, kFont);
}

void draw_panel(std::ostringstream& out, Context& ctx, const Panel& panel, double width, double height) {
  if (const auto* h = std::get_if<Heatmap>(&panel)) {
    draw_heatmap(out, ctx, *h, width, height);
  } else if (const auto* l = std::get_if<LineChart>(&panel)) {
    draw_line_chart(out, ctx, *l, width, height);
  } else {
    draw_interval_chart(out, std::get<IntervalChart>(panel), width, height);
  }
}

void document_begin(std::ostringstream& out, double width, double height) {
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\""
      << num(width) << "\" height=\"" << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"" << kFontFamily << "\">\n"
      << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

}  // namespace

// ------------------------------------------------------------------------------------ API
Rgb diverging_color(double t) {
  // ColorBrewer-like RdBu endpoints (dark blue, white, dark red), linear in between.
  static const std::vector<Rgb> stops = {{33, 102, 172}, {103, 169, 207}, {209, 229, 240}, {255, 255, 255},
                                         {253, 219, 199}, {239, 138, 98},  {178, 24, 43}};
  return ramp(stops, (std::clamp(std::isfinite(t) ? t : 0.0, -1.0, 1.0) + 1) / 2);
}

Rgb sequential_color(double t) {
  // Approximation of viridis by 6 anchor colours.
  static const std::vector<Rgb> stops = {{68, 1, 84},    {65, 68, 135},  {42, 120, 142},
                                         {34, 168, 132}, {122, 209, 81}, {253, 231, 37}};
  return ramp(stops, t);
}

std::string palette_color(size_t index) {
  static const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                   "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return kPalette[index % 10];
}

std::vector<double> nice_ticks(double lo, double hi, int target) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) return {lo};
  target = std::max(1, target);
  double raw = (hi - lo) / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (raw <= m * mag * 1.0000001) {
      step = m * mag;
      break;
    }
  std::vector<double> ticks;
  double first = std::ceil(lo / step - 1e-9) * step;
  for (double t = first; t <= hi + step * 1e-9; t += step) {
    double snapped = std::abs(t) < step * 1e-9 ? 0.0 : t;
    ticks.push_back(snapped);
    if (ticks.size() > 1000) break;
  }
  return ticks;
}

std::string format_tick(double value, double step) {
  char buf[48];
  if (step > 0 && std::abs(value) < step * 1e-6) value = 0;  // -1e-17 from t += step is 0
  double a = std::abs(value);
  if (value != 0 && (a >= 1e6 || a < 1e-4 || step < 1e-4)) {
    std::snprintf(buf, sizeof buf, "%.3g", value);
    return buf;
  }
  int decimals = 0;
  if (step > 0 && std::isfinite(step)) {
    decimals = std::max(0, static_cast<int>(std::ceil(-std::log10(step) - 1e-9)));
    // Steps like 2.5 or 0.25 need one more digit than their magnitude says.
    double scaled = step * std::pow(10.0, decimals);
    if (std::abs(scaled - std::round(scaled)) > 1e-6) ++decimals;
  }
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 8), value);
  std::string s(buf);
  if (s == "-0" || s.find_first_not_of("-0.") == std::string::npos) s = "0";
  return s;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string render_svg(const Figure& figure) {
  size_t n = figure.panels.size();
  int columns = figure.columns > 0 ? figure.columns
                                   : std::max(1, static_cast<int>(std::ceil(std::sqrt(static_cast<double>(n)))));
  columns = std::min<int>(columns, std::max<size_t>(1, n));
  size_t rows = n == 0 ? 0 : (n + columns - 1) / columns;
  double header = figure.title.empty() ? 0 : 32;
  // Shared legend: entries in rows under the title, as many per row as fit.
  double width = columns * figure.panel_width;
  double entry_w = legend_width(figure.legend) + 18;
  size_t per_row = std::max<size_t>(1, static_cast<size_t>(std::max(1.0, (width - 20) / std::max(1.0, entry_w))));
  size_t legend_rows = figure.legend.empty() ? 0 : (figure.legend.size() + per_row - 1) / per_row;
  double legend_h = legend_rows * (kFont + 8) + (legend_rows ? 6 : 0);
  double height = header + legend_h + static_cast<double>(rows) * figure.panel_height;

  std::ostringstream out;
  Context ctx;
  document_begin(out, width, height);
  if (!figure.title.empty()) text(out, width / 2, 22, figure.title, kTitleFont + 2, "middle", 0, true);
  for (size_t i = 0; i < figure.legend.size(); ++i) {
    double x = 10 + static_cast<double>(i % per_row) * entry_w;
    double y = header + 10 + static_cast<double>(i / per_row) * (kFont + 8);
    draw_legend(out, x, y, {figure.legend[i]});
  }
  for (size_t i = 0; i < n; ++i) {
    double x = static_cast<double>(i % columns) * figure.panel_width;
    double y = header + legend_h + static_cast<double>(i / columns) * figure.panel_height;
    out << "<g transform=\"translate(" << num(x) << "," << num(y) << ")\">\n";
    draw_panel(out, ctx, figure.panels[i], figure.panel_width, figure.panel_height);
    out << "</g>\n";
  }
  out << "</svg>\n";
  return out.str();
}

namespace {
// One panel as a whole document.
std::string render_alone(const Panel& panel, double width, double height) {
  Figure f;
  f.panels.push_back(panel);
  f.columns = 1;
  f.panel_width = width;
  f.panel_height = height;
  return render_svg(f);
}
}  // namespace

std::string render_svg(const Heatmap& heatmap, double width, double height) { return render_alone(heatmap, width, height); }

std::string render_svg(const IntervalChart& chart, double width, double height) { return render_alone(chart, width, height); }

std::string render_svg(const LineChart& chart, double width, double height) { return render_alone(chart, width, height); }

void write_svg(const std::string& path, const Figure& figure) { fs::write_file_atomic(path, render_svg(figure)); }
void write_svg(const std::string& path, const Heatmap& heatmap) { fs::write_file_atomic(path, render_svg(heatmap)); }
void write_svg(const std::string& path, const LineChart& chart) { fs::write_file_atomic(path, render_svg(chart)); }

std::string heatmap_png(const Heatmap& heatmap, int scale) {
  check_heatmap(heatmap);
  return heatmap_png_of(shown_cells(heatmap), make_scale(heatmap), std::max(1, scale));
}

}  // namespace tisa::plot
