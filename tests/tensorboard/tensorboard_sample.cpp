// tests/tensorboard/tensorboard_sample.cpp — provides: tensorboard_sample FOLDER, which writes a
// fixed set of scalars with TensorBoardWriter into FOLDER for test_read_events.sh to read back.
// The values cover what a reader can get wrong: zero (left out of the wire format unless it is
// in a oneof), a negative value, NaN, a float32 rounding (0.1), a step above 2^32, a tag longer
// than 127 bytes (two-byte lengths at every level).
#include <iostream>
#include <limits>
#include <string>

#include "report/tensorboard_writer.hpp"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: tensorboard_sample FOLDER\n";
    return 2;
  }
  try {
    mnist_ddp::report::TensorBoardWriter writer(argv[1]);
    writer.add_scalar("train/loss", 0, 2.5, /*wall_time=*/1700000000.0);
    writer.add_scalar("train/loss", 1, 0.0, /*wall_time=*/1700000001.5);
    writer.add_scalar("train/loss", 2, -1.75, /*wall_time=*/1700000002.0);
    writer.add_scalar("train/loss", 3, std::numeric_limits<double>::quiet_NaN());
    writer.add_scalar("test/accuracy", 1, 0.1);
    writer.add_scalar("train/lr", 5'000'000'000, 0.001);
    writer.add_scalar("long/" + std::string(195, 'x'), 4, 1e6);
    writer.flush();
  } catch (const std::exception& e) {
    std::cerr << "tensorboard_sample: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
