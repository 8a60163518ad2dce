// safetensors reader/writer against every file of golden/safetensors/ (cases.json): accepted files
// must give the listed tensors (values bit-exact, F16/BF16 by raw bits) and metadata; rejected
// files must throw tisa::Error naming the file. Plus writer round trips.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/error.h"
#include "common/fs.h"
#include "io/safetensors.h"
#include "support/test_paths.h"

namespace {

using tisa::io::DType;
using tisa::io::RawTensor;

template <typename T>
T element(const RawTensor& t, int64_t i) {
  T v;
  std::memcpy(&v, t.data.data() + i * sizeof(T), sizeof(T));
  return v;
}

void check_values(const std::string& ctx, const RawTensor& t, const nlohmann::json& expect) {
  const auto& values = expect["values"];
  ASSERT_EQ(static_cast<int64_t>(values.size()), t.numel()) << ctx;
  for (int64_t i = 0; i < t.numel(); ++i) {
    const auto& v = values[i];
    switch (t.dtype) {
      case DType::kF64: {
        double got = element<double>(t, i), want = v.get<double>();
        EXPECT_EQ(std::memcmp(&got, &want, 8), 0) << ctx << "[" << i << "] " << got << " vs " << want;
        break;
      }
      case DType::kF32: {
        float got = element<float>(t, i), want = static_cast<float>(v.get<double>());
        EXPECT_EQ(std::memcmp(&got, &want, 4), 0) << ctx << "[" << i << "] " << got << " vs " << want;
        break;
      }
      case DType::kF16:
      case DType::kBF16:
        EXPECT_EQ(element<uint16_t>(t, i), expect["bits"][i].get<uint16_t>()) << ctx << "[" << i << "]";
        break;
      case DType::kI64: EXPECT_EQ(element<int64_t>(t, i), v.get<int64_t>()) << ctx; break;
      case DType::kI32: EXPECT_EQ(element<int32_t>(t, i), v.get<int32_t>()) << ctx; break;
      case DType::kI16: EXPECT_EQ(element<int16_t>(t, i), v.get<int16_t>()) << ctx; break;
      case DType::kI8: EXPECT_EQ(element<int8_t>(t, i), v.get<int8_t>()) << ctx; break;
      case DType::kU8: EXPECT_EQ(element<uint8_t>(t, i), v.get<uint8_t>()) << ctx; break;
      case DType::kU16: EXPECT_EQ(element<uint16_t>(t, i), v.get<uint16_t>()) << ctx; break;
      case DType::kBool: EXPECT_EQ(element<uint8_t>(t, i) != 0, v.get<bool>()) << ctx; break;
    }
  }
}

void check_accepted(const std::string& path, const nlohmann::json& c) {
  const auto st = tisa::io::read_safetensors(path);
  size_t expected_tensors = 0;
  for (auto it = c["tensors"].begin(); it != c["tensors"].end(); ++it) {
    if (it.key() == "__metadata__") {
      std::map<std::string, std::string> want;
      for (auto m = it.value().begin(); m != it.value().end(); ++m) want[m.key()] = m.value().get<std::string>();
      EXPECT_EQ(st.metadata, want) << path;
      continue;
    }
    ++expected_tensors;
    const std::string ctx = path + ":" + it.key();
    auto found = st.tensors.find(it.key());
    ASSERT_NE(found, st.tensors.end()) << ctx;
    const auto& t = found->second;
    EXPECT_EQ(tisa::io::dtype_name(t.dtype), it.value()["dtype"].get<std::string>()) << ctx;
    EXPECT_EQ(t.shape, it.value()["shape"].get<std::vector<int64_t>>()) << ctx;
    check_values(ctx, t, it.value());
  }
  EXPECT_EQ(st.tensors.size(), expected_tensors) << path;
  // Writer round trip: same tensors and metadata, header padded to a multiple of 8.
  const std::string bytes = tisa::io::serialize_safetensors(st);
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u) << path;
  const auto back = tisa::io::parse_safetensors(bytes, "roundtrip of " + path);
  EXPECT_EQ(back.metadata, st.metadata);
  ASSERT_EQ(back.tensors.size(), st.tensors.size());
  for (const auto& [name, t] : st.tensors) {
    const auto& b = back.tensors.at(name);
    EXPECT_EQ(b.dtype, t.dtype);
    EXPECT_EQ(b.shape, t.shape);
    EXPECT_EQ(b.data, t.data) << name;
  }
}

}  // namespace

TEST(SafetensorsGolden, EveryCase) {
  TISA_REQUIRE_SHARED("golden/safetensors/cases.json");
  const auto cases = nlohmann::json::parse(tisa::fs::read_file(tisa::test::shared_path("golden/safetensors/cases.json")));
  int accepted = 0, rejected = 0;
  for (const auto& c : cases["cases"]) {
    const std::string file = c["file"].get<std::string>();
    const std::string path = tisa::test::shared_path("golden/safetensors/" + file);
    SCOPED_TRACE(file);
    if (c["must_reject"].get<bool>()) {
      ++rejected;
      try {
        tisa::io::read_safetensors(path);
        ADD_FAILURE() << file << " was accepted but must be rejected: " << c["reason"].get<std::string>();
      } catch (const tisa::Error& e) {
        EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << "error does not name the file: " << e.what();
      }
    } else {
      ++accepted;
      EXPECT_NO_THROW(check_accepted(path, c)) << file;
    }
  }
  EXPECT_EQ(accepted, 10);
  EXPECT_EQ(rejected, 20);
}

TEST(Safetensors, WriteSortsNamesAndReadsBack) {
  tisa::io::SafeTensors st;
  RawTensor b;
  b.dtype = DType::kI64;
  b.shape = {2};
  int64_t vals[2] = {-3, 9};
  b.data.assign(reinterpret_cast<const char*>(vals), sizeof(vals));
  RawTensor a;
  a.dtype = DType::kF32;
  a.shape = {};
  float f = 2.5f;
  a.data.assign(reinterpret_cast<const char*>(&f), 4);
  st.tensors["zeta"] = b;
  st.tensors["alpha"] = a;
  st.metadata["format"] = "pt";
  const auto dir = tisa::test::make_temp_dir("safetensors");
  tisa::io::write_safetensors(dir + "/x.safetensors", st);
  const std::string bytes = tisa::fs::read_file(dir + "/x.safetensors");
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_LT(header.find("\"alpha\""), header.find("\"zeta\""));
  EXPECT_NE(header.find("\"data_offsets\":[0,4]"), std::string::npos) << header;
  const auto back = tisa::io::read_safetensors(dir + "/x.safetensors");
  EXPECT_EQ(back.tensors.at("zeta").data, b.data);
  EXPECT_EQ(back.tensors.at("alpha").shape.size(), 0u);
  EXPECT_EQ(back.metadata.at("format"), "pt");
}

TEST(Safetensors, RejectsWithReason) {
  // A tensor whose span does not match its shape.
  std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})";
  std::string bytes(8, '\0');
  uint64_t n = header.size();
  std::memcpy(bytes.data(), &n, 8);
  bytes += header + std::string(4, '\0');
  try {
    tisa::io::parse_safetensors(bytes, "mem.safetensors");
    FAIL();
  } catch (const tisa::Error& e) {
    EXPECT_NE(std::string(e.what()).find("mem.safetensors"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("'a'"), std::string::npos) << e.what();
  }
}
