// The protobuf wire format (developers.google.com/protocol-buffers/docs/encoding), by hand:
// enough to write TensorBoard's Event/Summary messages (io/tensorboard_events.h) and to read
// back the few fields a resume needs. Fields are written in the order they are added.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tisa::io {

// Appends fields to a message. Sub-messages are encoded separately and added with message().
class ProtoWriter {
 public:
  ProtoWriter& varint(int field, uint64_t value);            // int32/int64/uint*/bool/enum
  ProtoWriter& int64(int field, int64_t value) { return varint(field, static_cast<uint64_t>(value)); }
  ProtoWriter& float64(int field, double value);  // double: fixed64
  ProtoWriter& float32(int field, float value);   // float: fixed32
  ProtoWriter& bytes(int field, std::string_view value);  // string, bytes
  ProtoWriter& message(int field, const ProtoWriter& sub) { return bytes(field, sub.str()); }
  const std::string& str() const { return out_; }

 private:
  void tag(int field, int wire_type);
  void raw_varint(uint64_t value);
  std::string out_;
};

// One field read from a message: its number, wire type and value (varint/fixed payload in
// `number`, length-delimited payload in `data`, a view into the message).
struct ProtoField {
  int field = 0;
  int wire_type = 0;  // 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32
  uint64_t number = 0;
  std::string_view data;
};

// Reads the fields of one message in order; next() is false at the end or on malformed input
// (then ok() is false).
class ProtoReader {
 public:
  explicit ProtoReader(std::string_view message) : in_(message) {}
  bool next(ProtoField& field);
  bool ok() const { return ok_; }

 private:
  std::optional<uint64_t> read_varint();
  std::string_view in_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace tisa::io
