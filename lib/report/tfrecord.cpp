// lib/report/tfrecord.cpp — CRC-32C from Boost.CRC; framing byte by byte, for any byte order.
#include "report/tfrecord.hpp"

#include <boost/crc.hpp>

namespace mnist_ddp::report {
namespace {

/// Appends the `count` low bytes of `value`, least significant first.
void append_little_endian(std::string& out, std::uint64_t value, int count) {
  for (int i = 0; i < count; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

}  // namespace

std::uint32_t crc32c(std::string_view bytes) {
  // Polynomial 0x1EDC6F41, initial value and final xor all ones, input and output reflected.
  boost::crc_optimal<32, 0x1EDC6F41, 0xFFFFFFFF, 0xFFFFFFFF, true, true> crc;
  crc.process_bytes(bytes.data(), bytes.size());
  return crc.checksum();
}

std::uint32_t masked_crc32c(std::string_view bytes) {
  // TensorFlow's mask (lib/hash/crc32c.h): a CRC over data holding CRCs is weak.
  const std::uint32_t crc = crc32c(bytes);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

std::string tfrecord_frame(std::string_view data) {
  std::string record;
  record.reserve(data.size() + 16);
  append_little_endian(record, data.size(), 8);
  append_little_endian(record, masked_crc32c(record), 4);  // of the 8 length bytes only
  record.append(data);
  append_little_endian(record, masked_crc32c(data), 4);
  return record;
}

}  // namespace mnist_ddp::report
