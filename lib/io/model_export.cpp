// lib/io/model_export.cpp — serialize to memory, then write atomically.
#include "io/model_export.hpp"

#include <sstream>

#include <torch/serialize/output-archive.h>

#include "io/atomic_file.hpp"

namespace mnist_ddp::io {

void export_model(const torch::nn::Module& model, const std::string& path) {
  torch::serialize::OutputArchive archive;
  model.save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  write_file_atomically(path, bytes.str());
}

}  // namespace mnist_ddp::io
