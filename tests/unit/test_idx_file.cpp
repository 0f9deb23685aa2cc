// tests/unit/test_idx_file.cpp — read_idx on good files and on every kind of damage it reports.
#include <filesystem>

#include <ATen/ATen.h>
#include <doctest/doctest.h>

#include "common/error.hpp"
#include "data/idx_file.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using data::IdxArray;
using data::read_idx;

/// The DataError message read_idx gives for `path`.
std::string idx_error(const std::string& path) {
  return error_message<DataError>([&] { read_idx(path); });
}

/// Checks that reading `path` fails with a message naming the file and containing `problem`.
void check_idx_error(const std::string& path, const std::string& problem) {
  const std::string message = idx_error(path);
  INFO("message: ", message);
  CHECK(contains(message, path));
  CHECK(contains(message, problem));
}

/// Writes `bytes` once raw and once gzipped, and checks that both fail with `problem`.
void check_idx_error_raw_and_gzip(const Bytes& bytes, const std::string& problem) {
  TempDir dir;
  for (Compression compression : {Compression::kRaw, Compression::kGzip}) {
    const std::string path = dir.file(compression == Compression::kRaw ? "file" : "file.gz");
    write_file(path, bytes, compression);
    check_idx_error(path, problem);
  }
}

/// Checks that `array` holds `dims` and, in row-major order, `payload`.
void check_array(const IdxArray& array, const std::vector<std::int64_t>& dims,
                 const Bytes& payload) {
  CHECK(array.dims == dims);
  CHECK(array.values.dtype() == at::kByte);
  CHECK(array.values.sizes().vec() == dims);
  const at::Tensor flat = array.values.contiguous().view(-1);
  REQUIRE(flat.numel() == static_cast<std::int64_t>(payload.size()));
  const auto* values = flat.data_ptr<std::uint8_t>();
  CHECK(Bytes(values, values + flat.numel()) == payload);
}

/// `bytes` as a gzip member (through write_file, in `dir`).
Bytes gzipped(const TempDir& dir, const Bytes& bytes) {
  const std::string path = dir.file("gzipped.tmp");
  write_file(path, bytes, Compression::kGzip);
  const std::string text = read_bytes(path);
  std::filesystem::remove(path);
  return Bytes(text.begin(), text.end());
}

}  // namespace

TEST_SUITE("read_idx") {
  TEST_CASE("reads a raw and a gzip file with the same dims and values") {
    TempDir dir;
    const Bytes payload = pattern_bytes(3 * 4 * 5);
    const Bytes file = ubyte_idx({3, 4, 5}, payload);
    write_file(dir.file("a.idx"), file, Compression::kRaw);
    write_file(dir.file("a.idx.gz"), file, Compression::kGzip);

    check_array(read_idx(dir.file("a.idx")), {3, 4, 5}, payload);
    check_array(read_idx(dir.file("a.idx.gz")), {3, 4, 5}, payload);
  }

  TEST_CASE("reads one- and four-dimensional files") {
    TempDir dir;
    write_file(dir.file("labels"), ubyte_idx({6}, {9, 0, 1, 255, 4, 7}));
    check_array(read_idx(dir.file("labels")), {6}, {9, 0, 1, 255, 4, 7});

    const Bytes payload = pattern_bytes(2 * 1 * 3 * 2);
    write_file(dir.file("four"), ubyte_idx({2, 1, 3, 2}, payload));
    check_array(read_idx(dir.file("four")), {2, 1, 3, 2}, payload);
  }

  TEST_CASE("a missing file names the file") {
    TempDir dir;
    check_idx_error(dir.file("absent"), "cannot open");
  }

  TEST_CASE("an empty file is too short for a header") {
    TempDir dir;
    write_file(dir.file("empty"), {});
    check_idx_error(dir.file("empty"), "too short for an IDX header");
  }

  TEST_CASE("a file that does not start with two zero bytes has a bad magic") {
    TempDir dir;
    write_file(dir.file("bad"), idx_bytes({0x12, 0x34, 0x08, 0x01}, {2}, {1, 2}));
    check_idx_error(dir.file("bad"), "bad magic 0x12340801");
  }

  TEST_CASE("element types other than unsigned bytes are refused") {
    TempDir dir;
    // 0x0D is float, a valid IDX type that MNIST never uses.
    write_file(dir.file("float"), idx_bytes({0x00, 0x00, 0x0D, 0x01}, {1}, {0, 0, 0, 0}));
    check_idx_error(dir.file("float"), "unsupported IDX element type 0xd");
  }

  TEST_CASE("zero dimensions and more than four are refused") {
    TempDir dir;
    write_file(dir.file("zero"), idx_bytes({0x00, 0x00, 0x08, 0x00}, {}, {1, 2, 3}));
    check_idx_error(dir.file("zero"), "declares 0 dimensions");

    write_file(dir.file("five"), ubyte_idx({1, 1, 1, 1, 1}, {42}));
    check_idx_error(dir.file("five"), "declares 5 dimensions");
  }

  TEST_CASE("a dimension of size 0 is refused") {
    TempDir dir;
    write_file(dir.file("empty_dim"), ubyte_idx({3, 0}, {}));
    check_idx_error(dir.file("empty_dim"), "dimension 1 is 0");
  }

  TEST_CASE("a header that promises more than 8 GiB is implausible") {
    TempDir dir;
    write_file(dir.file("huge"), ubyte_idx({0xFFFFFFFF, 0xFFFFFFFF}, {}));
    check_idx_error(dir.file("huge"), "implausible IDX header");
  }

  TEST_CASE("a header cut inside the dimensions is truncated") {
    TempDir dir;
    // Three dimensions declared, one and a half present.
    Bytes bytes = idx_bytes({0x00, 0x00, 0x08, 0x03}, {2}, {0x00, 0x1C});
    write_file(dir.file("cut_header"), bytes);
    check_idx_error(dir.file("cut_header"), "truncated IDX header (dimension 1 missing)");
  }

  TEST_CASE("data shorter than the header promises is truncated, raw or gzip") {
    check_idx_error_raw_and_gzip(ubyte_idx({4, 5}, pattern_bytes(17)),
                                 "promises 20 bytes of data, the file holds 17");
  }

  // Found by tests/fuzz/fuzz_idx_file: a 32-byte file whose header promised 8 GB made the reader
  // allocate 8 GB before it found the file short (out of memory under the fuzzer's limit).
  TEST_CASE("a header that promises more than the file can hold fails before allocating") {
    TempDir dir;
    const Bytes bytes = ubyte_idx({65535, 65535, 2}, pattern_bytes(16));
    write_file(dir.file("raw"), bytes);
    check_idx_error(dir.file("raw"), "promises 8589672450 bytes of data, the file holds 16");
    // A gzip file's size bounds its data too: deflate expands at most 1032-fold.
    write_file(dir.file("file.gz"), bytes, Compression::kGzip);
    const auto gzip_size =
        static_cast<std::int64_t>(std::filesystem::file_size(dir.file("file.gz")));
    check_idx_error(dir.file("file.gz"),
                    "promises 8589672450 bytes of data, the file holds at most " +
                        std::to_string(1032 * gzip_size) + " (gzip)");
  }

  TEST_CASE("bytes after the declared data are refused, raw or gzip") {
    check_idx_error_raw_and_gzip(ubyte_idx({4, 5}, pattern_bytes(21)),
                                 "trailing bytes after the 20 bytes");
  }

  TEST_CASE("a gzip header followed by garbage is corrupt gzip") {
    TempDir dir;
    write_file(dir.file("garbage.gz"), gzip_header_then_garbage());
    check_idx_error(dir.file("garbage.gz"), "corrupt gzip data (invalid block type)");
  }

  TEST_CASE("a gzip file cut in half is refused") {
    TempDir dir;
    const std::string path = dir.file("half.gz");
    write_file(path, ubyte_idx({100, 28, 28}, pattern_bytes(100 * 28 * 28)), Compression::kGzip);
    std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);

    const std::string message = idx_error(path);
    INFO("message: ", message);
    CHECK(contains(message, path));
    CHECK(contains(message, "corrupt gzip data (unexpected end of file)"));
  }

  TEST_CASE("a gzip file whose CRC-32 does not match its data is refused") {
    TempDir dir;
    Bytes bytes = gzipped(dir, ubyte_idx({4, 5}, pattern_bytes(20)));
    bytes[bytes.size() - 8] ^= 0xff;  // the trailer: CRC-32, then the length, 4 bytes each
    write_file(dir.file("bad_crc.gz"), bytes);
    check_idx_error(dir.file("bad_crc.gz"), "corrupt gzip data (incorrect data check)");
  }

  TEST_CASE("concatenated gzip members are read as one file, as gzip -d reads them") {
    TempDir dir;
    const Bytes payload = pattern_bytes(3 * 4 * 5);
    const Bytes file = ubyte_idx({3, 4, 5}, payload);
    const auto middle = file.begin() + 30;
    Bytes joined = gzipped(dir, Bytes(file.begin(), middle));
    const Bytes second = gzipped(dir, Bytes(middle, file.end()));
    joined.insert(joined.end(), second.begin(), second.end());
    write_file(dir.file("two_members.gz"), joined);
    check_array(read_idx(dir.file("two_members.gz")), {3, 4, 5}, payload);
  }

  TEST_CASE("bytes after the gzip stream that are not another member are refused") {
    TempDir dir;
    Bytes bytes = gzipped(dir, ubyte_idx({4, 5}, pattern_bytes(20)));
    bytes.insert(bytes.end(), {'j', 'u', 'n', 'k'});
    write_file(dir.file("junk.gz"), bytes);
    check_idx_error(dir.file("junk.gz"),
                    "corrupt gzip data (bytes after the end of the gzip "
                    "stream that do not start another member");
  }

  // All the data is there; only the CRC and length that prove it is intact are missing.
  TEST_CASE("a gzip file without its trailer is refused") {
    TempDir dir;
    const std::string path = dir.file("no_trailer.gz");
    write_file(path, ubyte_idx({100, 28, 28}, pattern_bytes(100 * 28 * 28)), Compression::kGzip);
    // The trailer is the last 8 bytes: CRC-32 and length of the uncompressed data.
    std::filesystem::resize_file(path, std::filesystem::file_size(path) - 8);
    check_idx_error(path, "corrupt gzip data (unexpected end of file)");
  }
}

}  // namespace mnist_ddp::testing
