// Minimal PNG encoder (no zlib): 8-bit RGB or palette images, deflate "stored" blocks (no
// compression), CRC-32 and Adler-32 written here. Used to embed heatmaps in SVG files as
// <image href="data:image/png;base64,..."> (one pixel per matrix cell instead of one <rect>) and
// to write stand-alone PNG pictures. Torch-free.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace tisa::plot {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};

// PNG bytes of a width×height RGB image; `pixels` is row-major, top row first (width·height).
std::string encode_png_rgb(int width, int height, const std::vector<Rgb>& pixels);

// PNG bytes of a palette image (colour type 3): `indices` row-major (width·height), each < palette.size()
// (at most 256 entries). Three times smaller than RGB for colormapped heatmaps.
std::string encode_png_indexed(int width, int height, const std::vector<uint8_t>& indices,
                               const std::vector<Rgb>& palette);

// Standard base64 (RFC 4648, with '=' padding).
std::string base64_encode(const std::string& bytes);

// CRC-32 (IEEE 802.3, as PNG uses) and Adler-32 (as zlib uses); exposed for tests.
uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc = 0);
uint32_t adler32(const uint8_t* data, size_t size);

}  // namespace tisa::plot
