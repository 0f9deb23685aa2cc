// tests/unit/test_checkpoint_file.cpp — encode_checkpoint/decode_checkpoint: bitwise round trips
// of every supported type, and CheckpointError (never a crash) for foreign, truncated, damaged,
// newer and inconsistent files; the CRC-32 that manifests record.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <ATen/ATen.h>
#include <doctest/doctest.h>
#include <zlib.h>

#include "checkpoint/checkpoint_file.hpp"
#include "common/error.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using checkpoint::CheckpointContents;
using checkpoint::decode_checkpoint;
using checkpoint::encode_checkpoint;

// Named in every error, as a real path would be.
const std::string kOrigin = "/runs/ckpt/ckpt-step-000000042.mddp";

// The layout of the file, spelled out here so the tests do not trust the code they test.
constexpr std::size_t kVersionAt = 8;        // after the 8-byte magic "MDDPCKPT"
constexpr std::size_t kHeaderLengthAt = 12;  // uint64, little-endian
constexpr std::size_t kHeaderAt = 20;        // the JSON header starts here

/// The little-endian bytes of `value`.
template <typename T>
std::string little_endian(T value) {
  std::string bytes;
  for (std::size_t i = 0; i < sizeof(T); ++i) {
    bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
  return bytes;
}

/// The uint32 stored little-endian at `at`.
std::uint32_t read_u32(const std::string& bytes, std::size_t at) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    value |= static_cast<std::uint32_t>(static_cast<unsigned char>(bytes[at + i])) << (8 * i);
  }
  return value;
}

/// zlib's CRC-32 of `bytes`.
std::uint32_t zlib_crc(const std::string& bytes) {
  return static_cast<std::uint32_t>(
      crc32(0, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

/// Replaces the last 4 bytes (the trailer) with the CRC-32 of everything before them.
void fix_trailer(std::string& file) {
  REQUIRE(file.size() >= 4);
  file.resize(file.size() - 4);
  file += little_endian(zlib_crc(file));
}

/// A complete file with a correct CRC around `header` and `payload`, whatever they say.
std::string craft(const std::string& header, const std::string& payload,
                  std::uint32_t version = 1) {
  std::string file = "MDDPCKPT" + little_endian(version) +
                     little_endian(static_cast<std::uint64_t>(header.size())) + header + payload;
  file += little_endian(zlib_crc(file));
  return file;
}

/// A tensor header entry for craft().
std::string entry(const std::string& dtype, const std::string& shape, const std::string& offset,
                  const std::string& bytes) {
  return R"({"name":"w","dtype":")" + dtype + R"(","shape":)" + shape + R"(,"offset":)" + offset +
         R"(,"bytes":)" + bytes + "}";
}

/// The CheckpointError message for decoding `bytes`.
std::string decode_error(const std::string& bytes) {
  return error_message<CheckpointError>([&] { decode_checkpoint(bytes, kOrigin); });
}

/// Tensors of every supported type, with the values most likely to be mangled.
CheckpointContents every_type() {
  CheckpointContents contents;
  contents.meta = {{"step", 1234},
                   {"epoch", 3},
                   {"loss", 0.125},
                   {"model", "cnn"},
                   {"nested", {{"world_size", 4}, {"list", {1, 2, 3}}}}};
  const float f_inf = std::numeric_limits<float>::infinity();
  const double d_inf = std::numeric_limits<double>::infinity();
  contents.tensors = {
      {"float32",
       at::tensor(std::vector<float>{
                      0.0f, -0.0f, 1.5f, -f_inf, f_inf, std::numeric_limits<float>::quiet_NaN(),
                      std::numeric_limits<float>::denorm_min(), std::numeric_limits<float>::max()})
           .reshape({2, 4})},
      {"float64",
       at::tensor(std::vector<double>{-0.0, 1e-300, d_inf, std::numeric_limits<double>::quiet_NaN(),
                                      std::numeric_limits<double>::lowest(), 0.1})},
      {"int64",
       at::tensor(std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), -1, 0, 1,
                                            std::numeric_limits<std::int64_t>::max()})},
      {"uint8", at::arange(256, at::kLong).to(at::kByte).reshape({4, 8, 8})},
      {"scalar", at::scalar_tensor(2.75, at::kFloat)},
      {"empty", at::empty({0}, at::kFloat)},
      {"empty_2d", at::empty({3, 0}, at::kLong)},
      // Not contiguous: encoded in its logical (row-major) order.
      {"transposed", at::arange(6, at::kDouble).reshape({2, 3}).t()},
  };
  return contents;
}

/// A small checkpoint, small enough to damage at every position.
std::string small_file() {
  CheckpointContents contents;
  contents.meta = {{"step", 7}};
  contents.tensors = {{"w", at::tensor(std::vector<float>{1.0f, -2.0f})},
                      {"b", at::tensor(std::vector<std::uint8_t>{9})}};
  return encode_checkpoint(contents);
}

}  // namespace

TEST_SUITE("checkpoint file") {
  TEST_CASE("every supported type round-trips bit for bit, with the meta JSON") {
    const CheckpointContents original = every_type();
    const std::string file = encode_checkpoint(original);
    CHECK(file.compare(0, 8, "MDDPCKPT") == 0);
    CHECK(read_u32(file, kVersionAt) == checkpoint::kCheckpointFormatVersion);
    CHECK(file[kHeaderAt] == '{');  // the JSON header follows the preamble

    const CheckpointContents decoded = decode_checkpoint(file, kOrigin);
    CHECK(decoded.meta == original.meta);
    CHECK_FALSE(decoded.meta.contains("tensors"));
    REQUIRE(decoded.tensors.size() == original.tensors.size());
    for (std::size_t i = 0; i < original.tensors.size(); ++i) {
      // Not a structured binding: clang 14 cannot capture one in CAPTURE's lambda.
      const std::string& name = original.tensors[i].first;
      const at::Tensor& tensor = original.tensors[i].second;
      CAPTURE(name);
      CHECK(decoded.tensors[i].first == name);
      CHECK(same_bits(decoded.tensors[i].second, tensor));
      CHECK(decoded.tensors[i].second.dim() == tensor.dim());
    }
  }

  TEST_CASE("a 0-d scalar stays 0-d and an empty tensor keeps its shape") {
    CheckpointContents contents;
    contents.tensors = {{"scalar", at::scalar_tensor(int64_t{-5}, at::kLong)},
                        {"empty", at::empty({0, 7}, at::kByte)}};
    const CheckpointContents decoded = decode_checkpoint(encode_checkpoint(contents), kOrigin);
    REQUIRE(decoded.tensors.size() == 2);
    CHECK(decoded.tensors[0].second.dim() == 0);
    CHECK(decoded.tensors[0].second.item<std::int64_t>() == -5);
    CHECK(decoded.tensors[1].second.sizes().vec() == std::vector<std::int64_t>{0, 7});
    CHECK(decoded.tensors[1].second.dtype() == at::kByte);
  }

  TEST_CASE("encoding is deterministic") {
    CHECK(encode_checkpoint(every_type()) == encode_checkpoint(every_type()));
  }

  TEST_CASE("a tensor of an unsupported type cannot be encoded") {
    CheckpointContents contents;
    contents.tensors = {{"half", at::zeros({2}, at::kHalf)}};
    const std::string message = error_message<Error>([&] { encode_checkpoint(contents); });
    INFO("message: ", message);
    CHECK(contains(message, "cannot checkpoint a tensor of type"));
  }

  TEST_CASE("a file of another kind is not an mnist_ddp checkpoint") {
    const Bytes idx = ubyte_idx({2, 2}, {1, 2, 3, 4});
    const std::string zip = std::string("PK\x03\x04", 4) + std::string(100, '\0');
    for (const std::string& bytes :
         {std::string(), std::string("MDDPCKPT"), std::string(idx.begin(), idx.end()), zip,
          std::string("mddpckpt") + small_file().substr(8),
          std::string("{\"step\": 1, \"this is\": \"json, not a checkpoint file\"}")}) {
      const std::string message = decode_error(bytes);
      INFO("message: ", message);
      CHECK(contains(message, kOrigin + ": "));
      CHECK(contains(message, "not an mnist_ddp checkpoint"));
    }
  }

  TEST_CASE("every truncation is refused, never read") {
    const std::string file = small_file();
    for (std::size_t cut = 0; cut < file.size(); ++cut) {
      CAPTURE(cut);
      const std::string message = decode_error(file.substr(0, cut));
      INFO("message: ", message);
      CHECK(contains(message, kOrigin + ": "));
    }
  }

  TEST_CASE("every single damaged byte is refused, never read") {
    const std::string file = small_file();
    for (std::size_t at = 0; at < file.size(); ++at) {
      for (unsigned char mask : {0x01, 0x80, 0xff}) {
        CAPTURE(at);
        CAPTURE(static_cast<int>(mask));
        std::string damaged = file;
        damaged[at] = static_cast<char>(static_cast<unsigned char>(damaged[at]) ^ mask);
        const std::string message = decode_error(damaged);
        INFO("message: ", message);
        CHECK(contains(message, kOrigin + ": "));
        CHECK((contains(message, "checksum") || contains(message, "not an mnist_ddp checkpoint") ||
               contains(message, "format version")));
      }
    }
  }

  TEST_CASE("a newer format version is refused as newer, even with a correct CRC") {
    std::string file = small_file();
    const std::string version = little_endian(checkpoint::kCheckpointFormatVersion + 1);
    file.replace(kVersionAt, 4, version);
    fix_trailer(file);
    const std::string message = decode_error(file);
    INFO("message: ", message);
    CHECK(contains(message, kOrigin + ": "));
    CHECK(contains(message,
                   "format version " + std::to_string(checkpoint::kCheckpointFormatVersion + 1)));
    CHECK(contains(message, "newer"));
  }

  TEST_CASE("a crafted file with a correct CRC is accepted") {
    // Proves craft() matches the format, so the refusals below are about their headers.
    const auto decoded =
        decode_checkpoint(craft(R"({"step":3,"tensors":[)" + entry("uint8", "[2]", "1", "2") + "]}",
                                std::string("\x01\x02\x03", 3)),
                          kOrigin);
    CHECK(decoded.meta == nlohmann::json{{"step", 3}});
    REQUIRE(decoded.tensors.size() == 1);
    CHECK(decoded.tensors[0].second.sizes().vec() == std::vector<std::int64_t>{2});
    CHECK(decoded.tensors[0].second[0].item<std::uint8_t>() == 2);
    CHECK(decoded.tensors[0].second[1].item<std::uint8_t>() == 3);
  }

  TEST_CASE("a header whose tensors do not fit the payload is refused") {
    const std::string payload(4, '\x05');
    const std::vector<std::string> entries = {
        entry("uint8", "[4]", "1", "4"),                     // runs one byte past the end
        entry("uint8", "[1]", "4", "1"),                     // starts at the end
        entry("uint8", "[1]", "18446744073709551615", "1"),  // offset 2^64 - 1
        entry("float32", "[2]", "0", "4"),                   // bytes disagree with the shape
        entry("float32", "[2]", "0", "8"),                   // 8 bytes, only 4 in the payload
        entry("int64", "[]", "0", "8"),                      // a scalar too big for the payload
        entry("uint8", "[1]", "-1", "1"),                    // a negative offset
    };
    for (const std::string& tensor : entries) {
      CAPTURE(tensor);
      const std::string message =
          decode_error(craft(R"({"step":1,"tensors":[)" + tensor + "]}", payload));
      INFO("message: ", message);
      CHECK(contains(message, kOrigin + ": "));
      CHECK(contains(message, "does not fit"));
    }
  }

  TEST_CASE("a shape whose byte count overflows 64 bits is refused") {
    // 2^32 x 2^32 bytes is 2^64, which wraps to 0 in uint64 arithmetic and would match "bytes": 0.
    const std::string message = decode_error(
        craft(R"({"tensors":[)" + entry("uint8", "[4294967296,4294967296]", "0", "0") + "]}", ""));
    INFO("message: ", message);
    CHECK(contains(message, kOrigin + ": "));
  }

  TEST_CASE("other malformed headers are refused with the origin") {
    struct Case {
      std::string header;
      const char* problem;
    };
    const std::vector<Case> cases = {
        {"{\"step\":", "malformed header"},
        {R"({"step":1})", "malformed header"},  // no tensor list
        {R"({"tensors":[{"name":"w"}]})", "malformed header"},
        {R"({"tensors":[)" + entry("float16", "[1]", "0", "2") + "]}", "unknown type"},
        {R"({"tensors":[)" + entry("uint8", "[-1]", "0", "0") + "]}", "bad shape"},
        // Found by tests/fuzz/fuzz_checkpoint_file: numbers that are not exact integers were
        // converted with get<int64_t>(), undefined behaviour for 4.2e20 (UBSan).
        {R"({"tensors":[)" + entry("uint8", "[418446744073709551615]", "0", "0") + "]}",
         "bad shape"},
        {R"({"tensors":[)" + entry("uint8", "[1.5]", "0", "1") + "]}", "bad shape"},
        {R"({"tensors":[)" + entry("uint8", "2", "0", "2") + "]}", "bad shape"},
        {R"({"tensors":[)" + entry("uint8", "[1]", "1e30", "1") + "]}", "does not fit"},
        {R"({"tensors":[)" + entry("uint8", "[1]", "0", "1.0") + "]}", "does not fit"},
        // An empty tensor's other sizes must fit the file too: LibTorch's checks overflow.
        {R"({"tensors":[)" +
             entry("uint8", "[0,4611686018427387904,4611686018427387904]", "0", "0") + "]}",
         "does not fit"},
        {R"({"tensors":[)" + entry("uint8", "[1,1,1,1,1,1,1,1,1]", "0", "1") + "]}", "bad shape"},
        {R"({"tensors":[],"x":)" + std::string(17, '[') + std::string(17, ']') + "}",
         "nested deeper than 16 levels"},
        // A stack overflow before depths were bounded.
        {R"({"tensors":[],"x":)" + std::string(200000, '[') + std::string(200000, ']') + "}",
         "nested deeper than 16 levels"},
        {R"({"tensors":[],"x":")" + std::string(1 << 20, 'x') + "\"}", "allowed"},
    };
    for (const Case& c : cases) {
      CAPTURE(c.header);
      const std::string message = decode_error(craft(c.header, std::string(4, '\0')));
      INFO("message: ", message);
      CHECK(contains(message, kOrigin + ": "));
      CHECK(contains(message, c.problem));
    }
  }

  TEST_CASE("a header length past the end of the file is refused") {
    std::string file = craft(R"({"tensors":[]})", "");
    file.replace(kHeaderLengthAt, 8, little_endian(std::uint64_t{1} << 40));
    fix_trailer(file);
    const std::string message = decode_error(file);
    INFO("message: ", message);
    CHECK(contains(message, kOrigin + ": "));
    CHECK(contains(message, "header length exceeds the file"));
  }

  TEST_CASE("checksum is zlib's CRC-32") {
    CHECK(checkpoint::checksum("123456789") == 0xCBF43926u);  // the standard check value
    CHECK(checkpoint::checksum("") == 0u);
  }

  TEST_CASE("checkpoint_checksum is the file's trailer and tells checkpoints apart") {
    const std::string first = small_file();
    const std::string second = encode_checkpoint(every_type());
    CHECK(checkpoint::checkpoint_checksum(first) == read_u32(first, first.size() - 4));
    CHECK(checkpoint::checkpoint_checksum(second) == read_u32(second, second.size() - 4));
    CHECK(checkpoint::checkpoint_checksum(first) == zlib_crc(first.substr(0, first.size() - 4)));
    CHECK(checkpoint::checkpoint_checksum(first) != checkpoint::checkpoint_checksum(second));
    CHECK(checkpoint::checkpoint_checksum("abc") == 0u);  // too short for a trailer
  }
}

}  // namespace mnist_ddp::testing
