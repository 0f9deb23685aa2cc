// lib/config/bench_options.cpp — Boost.Program_options for the allreduce benchmark.
#include "config/bench_options.hpp"

#include <sstream>

#include <boost/program_options.hpp>

#include "common/error.hpp"
#include "config/option_error.hpp"
#include "config/options.hpp"

namespace po = boost::program_options;

namespace mnist_ddp::config {
namespace {

po::options_description bench_options(BenchConfig& c) {
  const BenchConfig defaults;
  po::options_description options(
      "allreduce_bench: time the training's allreduce over message sizes, as nccl-tests\n\n"
      "Usage: mpirun -np N allreduce_bench [options]\n"
      "Prints time, algorithm bandwidth (size / time) and bus bandwidth (algbw * 2(n-1)/n) per\n"
      "size, checks every result and exits 1 when any element is wrong");
  options.add_options()("help,h", po::bool_switch(&c.help), "print this help and exit")(
      "backend",
      po::value<std::string>()
          ->default_value(to_string(defaults.backend))
          ->notifier([&c](const std::string& text) { read(text, "backend", c.backend); }),
      "the transport: auto (nccl where every rank has a GPU and NCCL, else mpi), nccl or mpi")(
      "min-bytes,b", po::value(&c.min_bytes)->default_value(defaults.min_bytes),
      "smallest message in bytes")(
      "max-bytes,e", po::value(&c.max_bytes)->default_value(defaults.max_bytes),
      "largest message in bytes")("factor,f", po::value(&c.factor)->default_value(defaults.factor),
                                  "multiply the size by this between steps")(
      "iters,n", po::value(&c.iters)->default_value(defaults.iters), "timed iterations per size")(
      "warmup,w", po::value(&c.warmup)->default_value(defaults.warmup),
      "untimed iterations per size before timing");
  return options;
}

}  // namespace

BenchConfig parse_bench_command(int argc, const char* const argv[]) {
  BenchConfig config;
  const po::options_description options = bench_options(config);
  try {
    po::variables_map values;
    po::store(po::command_line_parser(argc, argv)
                  .options(options)
                  .positional(po::positional_options_description())
                  .run(),
              values);
    po::notify(values);
  } catch (po::error& e) {
    throw UsageError(option_error_text(e));
  }
  if (config.min_bytes < 4 || config.max_bytes < config.min_bytes) {
    throw UsageError("need 4 <= --min-bytes <= --max-bytes (got " +
                     std::to_string(config.min_bytes) + " and " + std::to_string(config.max_bytes) +
                     ")");
  }
  if (config.factor < 2) throw UsageError("--factor must be at least 2");
  if (config.iters < 1 || config.warmup < 0) {
    throw UsageError("--iters must be at least 1 and --warmup at least 0");
  }
  return config;
}

std::string bench_help_text() {
  BenchConfig scratch;
  std::ostringstream text;
  text << bench_options(scratch);
  return text.str();
}

}  // namespace mnist_ddp::config
