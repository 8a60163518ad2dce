// Tests of the torch-free SVG/PNG writer (src/plot): PNG checksums against published values, the
// structure of the PNG stream, tick choice, colour maps, and SVG documents that are well-formed
// (balanced tags) with the expected parts (title, legend, embedded image, one polyline per series).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "common/error.h"
#include "plot/png.h"
#include "plot/svg.h"
#include "support/svg_check.h"

using namespace tisa::plot;

TEST(PngTest, ChecksumsMatchPublishedValues) {
  const std::string s = "123456789";
  const auto* p = reinterpret_cast<const uint8_t*>(s.data());
  EXPECT_EQ(crc32(p, s.size()), 0xcbf43926u);  // CRC-32 check value
  const std::string w = "Wikipedia";
  EXPECT_EQ(adler32(reinterpret_cast<const uint8_t*>(w.data()), w.size()), 0x11e60398u);
}

TEST(PngTest, Base64KnownValues) {
  EXPECT_EQ(base64_encode(""), "");
  EXPECT_EQ(base64_encode("f"), "Zg==");
  EXPECT_EQ(base64_encode("fo"), "Zm8=");
  EXPECT_EQ(base64_encode("foo"), "Zm9v");
  EXPECT_EQ(base64_encode("foobar"), "Zm9vYmFy");
}

namespace {
uint32_t be32(const std::string& s, size_t at) {
  return (uint32_t(uint8_t(s[at])) << 24) | (uint32_t(uint8_t(s[at + 1])) << 16) |
         (uint32_t(uint8_t(s[at + 2])) << 8) | uint32_t(uint8_t(s[at + 3]));
}
}  // namespace

TEST(PngTest, ChunksHaveValidCrcAndHeader) {
  // 300×250 RGB: 225,250 bytes of rows → several stored deflate blocks.
  std::vector<Rgb> pixels(300 * 250);
  for (size_t i = 0; i < pixels.size(); ++i) pixels[i] = {uint8_t(i), uint8_t(i >> 8), 7};
  std::string png = encode_png_rgb(300, 250, pixels);
  ASSERT_EQ(png.substr(0, 8), std::string("\x89PNG\r\n\x1a\n", 8));
  size_t pos = 8;
  std::vector<std::string> types;
  std::string idat;
  while (pos < png.size()) {
    uint32_t len = be32(png, pos);
    std::string type = png.substr(pos + 4, 4);
    types.push_back(type);
    uint32_t crc = crc32(reinterpret_cast<const uint8_t*>(png.data() + pos + 4), 4 + len);
    EXPECT_EQ(crc, be32(png, pos + 8 + len)) << type;
    if (type == "IHDR") {
      EXPECT_EQ(be32(png, pos + 8), 300u);
      EXPECT_EQ(be32(png, pos + 12), 250u);
    }
    if (type == "IDAT") idat += png.substr(pos + 8, len);
    pos += 12 + len;
  }
  EXPECT_EQ(pos, png.size());
  EXPECT_EQ(types, (std::vector<std::string>{"IHDR", "IDAT", "IEND"}));
  // Inflate the stored blocks by hand and compare with the filtered rows.
  std::string raw;
  size_t at = 2;
  bool last = false;
  while (!last) {
    last = idat[at] & 1;
    EXPECT_EQ((uint8_t(idat[at]) >> 1) & 3, 0) << "not a stored block";
    size_t len = uint8_t(idat[at + 1]) | (uint8_t(idat[at + 2]) << 8);
    size_t nlen = uint8_t(idat[at + 3]) | (uint8_t(idat[at + 4]) << 8);
    EXPECT_EQ(len ^ 0xffff, nlen);
    raw += idat.substr(at + 5, len);
    at += 5 + len;
  }
  ASSERT_EQ(raw.size(), 250u * (1 + 3 * 300));
  EXPECT_EQ(uint8_t(raw[0]), 0);                         // filter byte
  EXPECT_EQ(uint8_t(raw[1 + 3 * 5]), 5);                 // pixel 5: r = 5
  EXPECT_EQ(uint8_t(raw[901 + 1 + 2]), 7);               // row 1, pixel 0: b = 7
  EXPECT_EQ(adler32(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()), be32(idat, at));
}

TEST(PngTest, RejectsWrongSizes) {
  EXPECT_THROW(encode_png_rgb(2, 2, std::vector<Rgb>(3)), tisa::Error);
  EXPECT_THROW(encode_png_indexed(1, 1, {3}, {{0, 0, 0}}), tisa::Error);
}

TEST(PlotTest, NiceTicksAreRoundAndInside) {
  auto t = nice_ticks(0, 1, 5);
  ASSERT_EQ(t.size(), 6u);
  EXPECT_DOUBLE_EQ(t[0], 0);
  EXPECT_NEAR(t[1], 0.2, 1e-12);
  EXPECT_NEAR(t[5], 1.0, 1e-12);
  auto u = nice_ticks(-3.7, 12.2, 4);  // step 5
  EXPECT_EQ(u, (std::vector<double>{0, 5, 10}));
  EXPECT_EQ(format_tick(0.2, 0.2), "0.2");
  EXPECT_EQ(format_tick(2000, 1000), "2000");
  EXPECT_EQ(format_tick(0.25, 0.25), "0.25");
  EXPECT_EQ(format_tick(-1e-17, 0.5), "0");
}

TEST(PlotTest, DivergingColourMapIsWhiteAtZeroAndBlueRedAtEnds) {
  Rgb zero = diverging_color(0), neg = diverging_color(-1), pos = diverging_color(1);
  EXPECT_EQ(zero.r, 255);
  EXPECT_EQ(zero.g, 255);
  EXPECT_EQ(zero.b, 255);
  EXPECT_GT(neg.b, neg.r);
  EXPECT_GT(pos.r, pos.b);
  Rgb clamped = diverging_color(5);
  EXPECT_EQ(clamped.r, pos.r);
}

TEST(PlotTest, HeatmapSvgIsWellFormedWithImageTicksAndColourBar) {
  Heatmap h;
  h.title = "Gram <P, P> & more";
  h.rows = h.cols = 20;
  for (int i = 0; i < 20; ++i)
    for (int j = 0; j < 20; ++j) h.values.push_back(std::cos(0.3 * (i - j)));
  std::string svg = render_svg(h);
  std::string why;
  EXPECT_TRUE(tisa::test::svg_well_formed(svg, &why)) << why;
  EXPECT_NE(svg.find("Gram &lt;P, P&gt; &amp; more"), std::string::npos);
  EXPECT_NE(svg.find("data:image/png;base64,"), std::string::npos);
  EXPECT_NE(svg.find("linearGradient"), std::string::npos);
  EXPECT_NE(svg.find(">15</text>"), std::string::npos) << "index tick 15 expected";
}

TEST(PlotTest, LargeHeatmapIsShownAsBlockMeans) {
  Heatmap h;
  h.rows = h.cols = 600;
  h.values.assign(600 * 600, 1.0);
  h.max_cells = 256;
  std::string svg = render_svg(h);
  EXPECT_NE(svg.find("3x3 block means"), std::string::npos);
  EXPECT_THROW(render_svg(Heatmap{}), tisa::Error);
}

TEST(PlotTest, LineChartFigureHasOnePolylinePerSeriesAndLegend) {
  Figure f;
  f.title = "curves";
  for (int p = 0; p < 3; ++p) {
    LineChart c;
    c.title = "panel " + std::to_string(p);
    c.x_label = "step";
    for (int s = 0; s < 2; ++s) {
      Series series;
      series.name = "run-" + std::to_string(s);
      for (int i = 0; i < 100; ++i) {
        series.x.push_back(i);
        series.y.push_back(i == 50 ? NAN : std::exp(-0.01 * i * (s + 1)));
      }
      c.series.push_back(series);
    }
    f.panels.push_back(c);
  }
  std::string svg = render_svg(f);
  std::string why;
  EXPECT_TRUE(tisa::test::svg_well_formed(svg, &why)) << why;
  size_t polylines = 0;
  for (size_t at = svg.find("<polyline"); at != std::string::npos; at = svg.find("<polyline", at + 1)) ++polylines;
  EXPECT_EQ(polylines, 3u * 2u * 2u) << "the NaN splits each series into two parts";
  EXPECT_NE(svg.find(">run-1</text>"), std::string::npos);
  LineChart bad;
  bad.series.push_back({"x", {1, 2}, {1}, "", false});
  EXPECT_THROW(render_svg(bad), tisa::Error);
}
