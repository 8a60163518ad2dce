// PNG writing without zlib: the image data go into deflate "stored" blocks (BTYPE 00, at most
// 65535 bytes each), wrapped in a zlib stream (header 0x78 0x01, Adler-32 trailer), then split
// into PNG chunks with CRC-32. Filter type 0 (none) on every row.
#include "plot/png.h"

#include <algorithm>

#include "common/error.h"

namespace tisa::plot {
namespace {

std::array<uint32_t, 256> make_crc_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t n = 0; n < 256; ++n) {
    uint32_t c = n;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
    table[n] = c;
  }
  return table;
}

void put_u32_be(std::string& out, uint32_t v) {
  out.push_back(static_cast<char>((v >> 24) & 0xff));
  out.push_back(static_cast<char>((v >> 16) & 0xff));
  out.push_back(static_cast<char>((v >> 8) & 0xff));
  out.push_back(static_cast<char>(v & 0xff));
}

void put_chunk(std::string& out, const char type[4], const std::string& data) {
  put_u32_be(out, static_cast<uint32_t>(data.size()));
  std::string body(type, 4);
  body += data;
  out += body;
  put_u32_be(out, crc32(reinterpret_cast<const uint8_t*>(body.data()), body.size()));
}

// zlib stream of `raw` using stored deflate blocks only.
std::string zlib_stored(const std::string& raw) {
  std::string out;
  out.push_back(static_cast<char>(0x78));  // CMF: deflate, 32 KiB window
  out.push_back(static_cast<char>(0x01));  // FLG: no dictionary, fastest; (0x7801 % 31 == 0)
  size_t pos = 0;
  do {
    size_t len = std::min<size_t>(65535, raw.size() - pos);
    bool last = pos + len == raw.size();
    out.push_back(static_cast<char>(last ? 1 : 0));  // BFINAL, BTYPE = 00
    out.push_back(static_cast<char>(len & 0xff));
    out.push_back(static_cast<char>((len >> 8) & 0xff));
    out.push_back(static_cast<char>(~len & 0xff));
    out.push_back(static_cast<char>((~len >> 8) & 0xff));
    out.append(raw, pos, len);
    pos += len;
  } while (pos < raw.size());
  put_u32_be(out, adler32(reinterpret_cast<const uint8_t*>(raw.data()), raw.size()));
  return out;
}

std::string encode(int width, int height, uint8_t colour_type, const std::string& rows,
                   const std::string& palette) {
  std::string out("\x89PNG\r\n\x1a\n", 8);
  std::string ihdr;
  put_u32_be(ihdr, static_cast<uint32_t>(width));
  put_u32_be(ihdr, static_cast<uint32_t>(height));
  ihdr.push_back(8);                                // bit depth
  ihdr.push_back(static_cast<char>(colour_type));   // 2 = RGB, 3 = palette
  ihdr.push_back(0);                                // deflate
  ihdr.push_back(0);                                // adaptive filtering (we use type 0)
  ihdr.push_back(0);                                // no interlace
  put_chunk(out, "IHDR", ihdr);
  if (!palette.empty()) put_chunk(out, "PLTE", palette);
  put_chunk(out, "IDAT", zlib_stored(rows));
  put_chunk(out, "IEND", "");
  return out;
}

void check_size(int width, int height, size_t count) {
  if (width <= 0 || height <= 0)
    throw Error("PNG: image size must be positive, got " + std::to_string(width) + "x" + std::to_string(height));
  if (count != static_cast<size_t>(width) * static_cast<size_t>(height))
    throw Error("PNG: " + std::to_string(count) + " pixels for a " + std::to_string(width) + "x" +
                std::to_string(height) + " image");
}

}  // namespace

uint32_t crc32(const uint8_t* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = make_crc_table();
  uint32_t c = crc ^ 0xffffffffu;
  for (size_t i = 0; i < size; ++i) c = table[(c ^ data[i]) & 0xff] ^ (c >> 8);
  return c ^ 0xffffffffu;
}

uint32_t adler32(const uint8_t* data, size_t size) {
  uint32_t a = 1, b = 0;
  for (size_t i = 0; i < size; ++i) {
    a = (a + data[i]) % 65521u;
    b = (b + a) % 65521u;
  }
  return (b << 16) | a;
}

std::string encode_png_rgb(int width, int height, const std::vector<Rgb>& pixels) {
  check_size(width, height, pixels.size());
  std::string rows;
  rows.reserve(static_cast<size_t>(height) * (1 + 3 * static_cast<size_t>(width)));
  for (int y = 0; y < height; ++y) {
    rows.push_back(0);  // filter: none
    for (int x = 0; x < width; ++x) {
      const Rgb& p = pixels[static_cast<size_t>(y) * width + x];
      rows.push_back(static_cast<char>(p.r));
      rows.push_back(static_cast<char>(p.g));
      rows.push_back(static_cast<char>(p.b));
    }
  }
  return encode(width, height, 2, rows, "");
}

std::string encode_png_indexed(int width, int height, const std::vector<uint8_t>& indices,
                               const std::vector<Rgb>& palette) {
  check_size(width, height, indices.size());
  if (palette.empty() || palette.size() > 256)
    throw Error("PNG: palette must have 1..256 entries, got " + std::to_string(palette.size()));
  std::string plte;
  for (const Rgb& c : palette) {
    plte.push_back(static_cast<char>(c.r));
    plte.push_back(static_cast<char>(c.g));
    plte.push_back(static_cast<char>(c.b));
  }
  std::string rows;
  rows.reserve(static_cast<size_t>(height) * (1 + static_cast<size_t>(width)));
  for (int y = 0; y < height; ++y) {
    rows.push_back(0);
    for (int x = 0; x < width; ++x) {
      uint8_t index = indices[static_cast<size_t>(y) * width + x];
      if (index >= palette.size())
        throw Error("PNG: palette index " + std::to_string(index) + " out of range");
      rows.push_back(static_cast<char>(index));
    }
  }
  return encode(width, height, 3, rows, plte);
}

std::string base64_encode(const std::string& bytes) {
  static const char* kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back(kAlphabet[v & 63]);
  }
  if (i + 1 == bytes.size()) {
    uint32_t v = uint8_t(bytes[i]) << 16;
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out += "==";
  } else if (i + 2 == bytes.size()) {
    uint32_t v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out.push_back(kAlphabet[(v >> 18) & 63]);
    out.push_back(kAlphabet[(v >> 12) & 63]);
    out.push_back(kAlphabet[(v >> 6) & 63]);
    out.push_back('=');
  }
  return out;
}

}  // namespace tisa::plot
