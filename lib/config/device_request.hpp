// lib/config/device_request.hpp — provides: DeviceRequest, what the device plan needs of a run.
#pragma once

#include "config/train_config.hpp"

namespace mnist_ddp::config {

/// The options that decide devices, transport and threads: distributed/ takes these alone.
struct DeviceRequest {
  Device device = TrainConfig().device;
  Backend backend = TrainConfig().backend;
  Mode mode = TrainConfig().mode;
  bool communicate_alone = TrainConfig().communicate_alone;
  int threads = TrainConfig().threads;               // intra-op threads per rank; 0: cores shared
  double comm_timeout = TrainConfig().comm_timeout;  // for the communicator's waits
};

/// `config`'s device options.
inline DeviceRequest device_request(const TrainConfig& config) {
  return {config.device,  config.backend,     config.mode, config.communicate_alone,
          config.threads, config.comm_timeout};
}

}  // namespace mnist_ddp::config
