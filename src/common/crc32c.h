// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of TFRecord framing
// (io/tf_record.h). Table-driven, one byte at a time: event files are small.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace tisa {

// CRC-32C of `data`; crc32c("123456789") == 0xE3069283. `crc` continues an earlier value.
uint32_t crc32c(std::string_view data, uint32_t crc = 0);

// TFRecord's masked form: ((crc >> 15) | (crc << 17)) + 0xA282EAD8, so that a CRC stored next to
// the data it covers is not itself a frequent CRC value.
uint32_t masked_crc32c(std::string_view data);

}  // namespace tisa
