// TensorBoard event files without TensorBoard (issue 35): CRC-32C against published vectors,
// TFRecord framing (round trip, a torn tail, a flipped bit), the hand-written protobuf read back
// by the same wire reader, and the resume rule of TensorBoardWriter::drop_events_after(). The
// files are read by the real `tensorboard` package in tests/cli/tensorboard_itest.cpp.
#include <gtest/gtest.h>

#include <string>

#include "common/crc32c.h"
#include "common/fs.h"
#include "io/protobuf_wire.h"
#include "io/tensorboard_events.h"
#include "io/tensorboard_writer.h"
#include "io/tf_record.h"
#include "support/test_paths.h"

namespace {

using namespace tisa;
namespace tb = io::tensorboard;

TEST(Crc32c, KnownVectors) {
  EXPECT_EQ(crc32c("123456789"), 0xE3069283u);                     // the CRC catalogue's check value
  EXPECT_EQ(crc32c(std::string(32, '\0')), 0x8A9136AAu);           // RFC 3720 B.4: 32 bytes of 0
  EXPECT_EQ(crc32c(std::string(32, '\xff')), 0x62A8AB43u);         // RFC 3720 B.4: 32 bytes of 0xFF
  std::string ascending;
  for (int i = 0; i < 32; ++i) ascending.push_back(static_cast<char>(i));
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);                       // RFC 3720 B.4: 0x00 .. 0x1F
  EXPECT_EQ(crc32c(""), 0u);
  EXPECT_EQ(crc32c("56789", crc32c("1234")), 0xE3069283u);         // continued in two parts
}

TEST(Crc32c, MaskedFormOfTfRecord) {
  const uint32_t crc = crc32c("123456789");
  EXPECT_EQ(masked_crc32c("123456789"), ((crc >> 15) | (crc << 17)) + 0xA282EAD8u);
}

TEST(TfRecord, FramesAndScansBack) {
  const std::string a = io::frame_record("first"), b = io::frame_record(std::string(300, 'x'));
  ASSERT_EQ(a.size(), 16u + 5u);
  EXPECT_EQ(a.substr(0, 8), std::string("\x05\0\0\0\0\0\0\0", 8));  // uint64 length, little-endian
  const std::string file = a + b;  // the scan's views point into it
  const auto scan = io::scan_records(file);
  ASSERT_EQ(scan.records.size(), 2u);
  EXPECT_EQ(scan.records[0], "first");
  EXPECT_EQ(scan.records[1], std::string(300, 'x'));
  EXPECT_TRUE(scan.clean);
}

TEST(TfRecord, StopsAtATornOrCorruptRecord) {
  const std::string a = io::frame_record("whole"), b = io::frame_record("cut short by SIGKILL");
  for (size_t cut = 1; cut < b.size(); ++cut) {
    const auto scan = io::scan_records(a + b.substr(0, cut));
    ASSERT_EQ(scan.records.size(), 1u) << cut;
    EXPECT_EQ(scan.valid_bytes, a.size());
    EXPECT_FALSE(scan.clean);
  }
  std::string flipped = a + b;
  flipped[a.size() + 14] ^= 0x01;  // a bit of the second record's data
  EXPECT_EQ(io::scan_records(flipped).records.size(), 1u);
}

TEST(ProtobufWire, VarintsAndFieldsRoundTrip) {
  io::ProtoWriter w;
  w.varint(1, 300).int64(2, -1).float64(3, 0.5).float32(4, 2.0f).bytes(5, "tag");
  EXPECT_EQ(w.str().substr(0, 3), std::string("\x08\xac\x02", 3));  // field 1, varint 300
  io::ProtoReader r(w.str());
  io::ProtoField f;
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.number, 300u);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(static_cast<int64_t>(f.number), -1);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.wire_type, 1);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.wire_type, 5);
  ASSERT_TRUE(r.next(f));
  EXPECT_EQ(f.field, 5);
  EXPECT_EQ(f.data, "tag");
  EXPECT_FALSE(r.next(f));
  EXPECT_TRUE(r.ok());
  io::ProtoReader bad(w.str().substr(0, w.str().size() - 1));  // the last string cut short
  while (bad.next(f)) {
  }
  EXPECT_FALSE(bad.ok());
}

TEST(TensorBoardEvents, StepAndTagsReadBack) {
  const auto info = tb::read_event_info(tb::scalars_event(1.5e9, 42, {{"train/loss", 2.5}, {"train/lr", 1e-4}}));
  ASSERT_TRUE(info.ok);
  EXPECT_EQ(info.step, 42);
  EXPECT_EQ(info.tags, (std::vector<std::string>{"train/loss", "train/lr"}));
  EXPECT_EQ(tb::read_event_info(tb::session_end_event(1.5e9, 7, tb::SessionStatus::kSuccess)).tags,
            std::vector<std::string>{tb::kSessionEndTag});
  EXPECT_EQ(tb::read_event_info(tb::text_event(1.5e9, 0, "config", "    a: 1\n")).tags,
            std::vector<std::string>{"config"});
  EXPECT_EQ(tb::read_event_info(tb::file_version_event(1.5e9)).step, 0);
}

// A resume after step 2 keeps steps <= 2 and drops later steps, the session end and a torn tail.
TEST(TensorBoardWriter, ResumeDropsLaterStepsSessionEndAndTornTail) {
  const std::string dir = test::make_temp_dir("tb_drop") + "/tensorboard";
  std::string path;
  {
    io::TensorBoardWriter w(dir);
    path = w.path();
    w.write_event(tb::session_start_event(1.5e9, {{"lr", 0.1}}, ""));
    for (int64_t step = 1; step <= 4; ++step) w.write_scalars(step, {{"train/loss", 1.0 / step}});
    w.write_event(tb::session_end_event(1.5e9, 2, tb::SessionStatus::kSuccess));
  }
  EXPECT_EQ(io::TensorBoardWriter::event_files(dir), std::vector<std::string>{path});
  {
    std::string torn = fs::read_file(path) + io::frame_record(tb::scalars_event(1.5e9, 5, {{"train/loss", 0.2}}));
    torn.resize(torn.size() - 3);
    fs::write_file_atomic(path, torn);
  }
  const auto kept = io::TensorBoardWriter::drop_events_after(dir, 2, {tb::kSessionEndTag});
  EXPECT_TRUE(kept.count({tb::kSessionStartTag, 0}));
  EXPECT_TRUE(kept.count({"train/loss", 2}));
  EXPECT_FALSE(kept.count({"train/loss", 3}));
  for (const auto& [tag, step] : kept) EXPECT_NE(tag, tb::kSessionEndTag) << step;
  const std::string bytes = fs::read_file(path);
  const auto scan = io::scan_records(bytes);
  EXPECT_TRUE(scan.clean);
  std::vector<int64_t> steps;
  for (auto r : scan.records) {
    const auto info = tb::read_event_info(r);
    if (!info.tags.empty() && info.tags[0] == "train/loss") steps.push_back(info.step);
  }
  EXPECT_EQ(steps, (std::vector<int64_t>{1, 2}));
  // Nothing more to drop: the file is left as it is.
  io::TensorBoardWriter::drop_events_after(dir, 2, {tb::kSessionEndTag});
  EXPECT_EQ(fs::read_file(path), bytes);
}

}  // namespace
