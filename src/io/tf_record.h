// TFRecord framing, the container of TensorBoard event files: per record
//   uint64 length (little-endian), uint32 masked CRC-32C of those 8 bytes,
//   `length` bytes of data, uint32 masked CRC-32C of the data (common/crc32c.h).
// A file cut short by a crash ends in an incomplete record, which readers ignore.
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tisa::io {

// The framed bytes of one record.
std::string frame_record(std::string_view data);

// The complete, intact records at the start of `bytes`: reading stops at the first record that
// is cut short or whose checksums do not match.
struct RecordScan {
  std::vector<std::string_view> records;  // views into `bytes`
  size_t valid_bytes = 0;                 // bytes up to the end of the last intact record
  bool clean = true;                      // false when bytes follow the last intact record
};
RecordScan scan_records(std::string_view bytes);

}  // namespace tisa::io
