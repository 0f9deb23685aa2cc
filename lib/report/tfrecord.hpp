// lib/report/tfrecord.hpp — provides: crc32c, masked_crc32c, tfrecord_frame: TFRecord framing.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mnist_ddp::report {

/// CRC-32C (Castagnoli, reflected, as in iSCSI and ext4): crc32c("123456789") == 0xE3069283.
std::uint32_t crc32c(std::string_view bytes);

/// The CRC-32C of `bytes` as TFRecord stores it: rotated right by 15 bits plus 0xa282ead8.
std::uint32_t masked_crc32c(std::string_view bytes);

/// `data` as a TFRecord: uint64 length, its masked CRC, data, the data's masked CRC; little-endian.
std::string tfrecord_frame(std::string_view data);

}  // namespace mnist_ddp::report
