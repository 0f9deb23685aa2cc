// lib/checkpoint/checkpoint_file.cpp — the checkpoint container, little-endian throughout.
#include "checkpoint/checkpoint_file.hpp"

#include <cstring>
#include <map>

#include <ATen/ATen.h>
#include <zlib.h>

#include "common/error.hpp"

namespace mnist_ddp::checkpoint {
namespace {

constexpr char kMagic[8] = {'M', 'D', 'D', 'P', 'C', 'K', 'P', 'T'};
constexpr size_t kPreamble = sizeof(kMagic) + 4 + 8;  // magic, version, header length
constexpr size_t kTrailer = 4;                        // CRC-32 of everything before it
constexpr size_t kMaxHeaderBytes = 1 << 20;           // a model's header takes a few KB
constexpr size_t kMaxDims = 8;                        // a model's tensors have at most 4
constexpr int kMaxJsonDepth = 16;                     // headers and manifests use three levels

const std::map<std::string, at::ScalarType>& known_dtypes() {
  static const std::map<std::string, at::ScalarType> dtypes = {{"float32", at::kFloat},
                                                               {"float64", at::kDouble},
                                                               {"int64", at::kLong},
                                                               {"uint8", at::kByte}};
  return dtypes;
}

template <typename T>
void put(std::string& out, T value) {
  for (size_t i = 0; i < sizeof(T); ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

template <typename T>
T get(const std::string& in, size_t at) {
  T value = 0;
  for (size_t i = 0; i < sizeof(T); ++i) {
    value |= static_cast<T>(static_cast<unsigned char>(in[at + i])) << (8 * i);
  }
  return value;
}

[[noreturn]] void fail(const std::string& origin, const std::string& problem) {
  throw CheckpointError(origin + ": " + problem);
}

}  // namespace

std::string type_name(at::ScalarType type) {
  for (const auto& [name, known] : known_dtypes()) {
    if (known == type) return name;
  }
  return c10::toString(type);
}

nlohmann::json parse_bounded_json(std::string_view text, std::size_t max_bytes,
                                  const std::string& what) {
  if (text.size() > max_bytes) {
    throw CheckpointError(what + ": " + std::to_string(text.size()) + " bytes, over the " +
                          std::to_string(max_bytes) + " allowed");
  }
  bool too_deep = false;
  // Returning false at the limit discards the deeper values, so none is ever built.
  const nlohmann::json::parser_callback_t within_depth =
      [&too_deep](int depth, nlohmann::json::parse_event_t, nlohmann::json&) {
        if (depth > kMaxJsonDepth) too_deep = true;
        return !too_deep;
      };
  nlohmann::json parsed;
  try {
    parsed = nlohmann::json::parse(text, within_depth);
  } catch (const nlohmann::json::exception& e) {
    throw CheckpointError(what + ": " + e.what());
  }
  if (too_deep) {
    throw CheckpointError(what + ": nested deeper than " + std::to_string(kMaxJsonDepth) +
                          " levels");
  }
  return parsed;
}

std::uint32_t checksum(std::string_view bytes) {
  return static_cast<std::uint32_t>(
      crc32_z(0, reinterpret_cast<const Bytef*>(bytes.data()), bytes.size()));
}

std::uint32_t checkpoint_checksum(std::string_view file_bytes) {
  return file_bytes.size() < kTrailer
             ? 0
             : checksum(file_bytes.substr(0, file_bytes.size() - kTrailer));
}

std::string encode_checkpoint(const CheckpointContents& contents) {
  nlohmann::json header = contents.meta;
  header["tensors"] = nlohmann::json::array();
  std::vector<at::Tensor> payload;
  std::int64_t offset = 0;
  for (const auto& [name, tensor] : contents.tensors) {
    at::Tensor cpu = tensor.detach().to(at::kCPU).contiguous();
    const std::int64_t bytes = cpu.numel() * static_cast<std::int64_t>(cpu.element_size());
    const std::string dtype = type_name(cpu.scalar_type());
    if (!known_dtypes().count(dtype)) {
      throw Error(ExitCode::kFailure, "cannot checkpoint a tensor of type " + dtype);
    }
    header["tensors"].push_back({{"name", name},
                                 {"dtype", dtype},
                                 {"shape", cpu.sizes().vec()},
                                 {"offset", offset},
                                 {"bytes", bytes}});
    offset += bytes;
    payload.push_back(cpu);
  }
  const std::string json = header.dump();

  std::string out(kMagic, sizeof(kMagic));
  put<std::uint32_t>(out, kCheckpointFormatVersion);
  put<std::uint64_t>(out, json.size());
  out += json;
  out.reserve(out.size() + static_cast<size_t>(offset) + kTrailer);
  for (const at::Tensor& tensor : payload) {
    out.append(static_cast<const char*>(tensor.data_ptr()),
               static_cast<size_t>(tensor.numel()) * tensor.element_size());
  }
  put<std::uint32_t>(out, checksum(out));
  return out;
}

CheckpointContents decode_checkpoint(const std::string& bytes, const std::string& origin) {
  if (bytes.size() < kPreamble + kTrailer || std::memcmp(bytes.data(), kMagic, 8) != 0) {
    fail(origin, "not an mnist_ddp checkpoint (no MDDPCKPT signature)");
  }
  const auto version = get<std::uint32_t>(bytes, 8);
  if (version > kCheckpointFormatVersion) {
    fail(origin, "written in checkpoint format version " + std::to_string(version) +
                     "; this build reads versions up to " +
                     std::to_string(kCheckpointFormatVersion) + " (use a newer mnist_ddp)");
  }
  const size_t body = bytes.size() - kTrailer;
  if (get<std::uint32_t>(bytes, body) != checksum(std::string_view(bytes).substr(0, body))) {
    fail(origin, "checksum mismatch: the file is truncated or damaged");
  }
  const auto json_size = get<std::uint64_t>(bytes, 12);
  if (json_size > body - kPreamble) fail(origin, "header length exceeds the file");

  CheckpointContents contents;
  contents.meta = parse_bounded_json(std::string_view(bytes).substr(kPreamble, json_size),
                                     kMaxHeaderBytes, origin + ": malformed header");
  try {
    const size_t payload_start = kPreamble + json_size;
    const size_t payload_size = body - payload_start;
    for (const nlohmann::json& entry : contents.meta.at("tensors")) {
      const std::string name = entry.at("name").get<std::string>();
      const auto dtype = known_dtypes().find(entry.at("dtype").get<std::string>());
      if (dtype == known_dtypes().end()) fail(origin, "tensor '" + name + "' has an unknown type");
      const nlohmann::json& dims = entry.at("shape");
      if (!dims.is_array() || dims.size() > kMaxDims) {
        fail(origin, "tensor '" + name + "' has a bad shape");
      }
      const auto offset = exact_integer<std::uint64_t>(entry.at("offset"));
      const auto size = exact_integer<std::uint64_t>(entry.at("bytes"));
      if (!offset || !size) fail(origin, "tensor '" + name + "' does not fit the file");
      std::vector<std::int64_t> shape;
      // Zero sizes left out: an empty [0, 2^62, 2^62] tensor would overflow LibTorch's checks.
      std::uint64_t nonzero_bytes = at::elementSize(dtype->second);
      bool empty = false;
      for (const nlohmann::json& dim : dims) {
        const auto d = exact_integer<std::int64_t>(dim);
        if (!d || *d < 0) fail(origin, "tensor '" + name + "' has a bad shape");
        empty = empty || *d == 0;
        // Bounded by the payload before multiplying, so no product can overflow.
        if (*d > 0 && nonzero_bytes > payload_size / static_cast<std::uint64_t>(*d)) {
          fail(origin, "tensor '" + name + "' does not fit the file");
        }
        if (*d > 0) nonzero_bytes *= static_cast<std::uint64_t>(*d);
        shape.push_back(*d);
      }
      const std::uint64_t expected = empty ? 0 : nonzero_bytes;
      if (*size != expected || *offset > payload_size || *size > payload_size - *offset) {
        fail(origin, "tensor '" + name + "' does not fit the file");
      }
      at::Tensor tensor = at::empty(shape, at::TensorOptions().dtype(dtype->second));
      // An empty tensor's data_ptr is null, and memcpy with null is undefined even for 0 bytes.
      if (*size > 0) std::memcpy(tensor.data_ptr(), bytes.data() + payload_start + *offset, *size);
      contents.tensors.emplace_back(name, tensor);
    }
  } catch (const nlohmann::json::exception& e) {
    fail(origin, std::string("malformed header: ") + e.what());
  }
  contents.meta.erase("tensors");
  return contents;
}

}  // namespace mnist_ddp::checkpoint
