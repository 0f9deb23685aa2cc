// lib/model/model_export.cpp — serialize to memory, then write atomically.
#include "model/model_export.hpp"

#include <sstream>

#include <torch/serialize/output-archive.h>

#include "common/atomic_file.hpp"

namespace mnist_ddp::model {

void export_model(const torch::nn::Module& model, const std::string& path) {
  torch::serialize::OutputArchive archive;
  model.save(archive);
  std::ostringstream bytes;
  archive.save_to(bytes);
  write_file_atomically(path, bytes.str());
}

}  // namespace mnist_ddp::model
