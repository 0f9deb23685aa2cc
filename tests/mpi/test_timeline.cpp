// tests/mpi/test_timeline.cpp — Timeline: rank 0 writes one Chrome trace holding every rank's
// spans, with process names, rows for compute and communication, and times on one clock; only
// the steps of its window.
#include <fstream>
#include <map>
#include <thread>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "distributed/mpi_communicator.hpp"
#include "report/timeline.hpp"
#include "support/idx_writer.hpp"
#include "support/mpi_test_world.hpp"

namespace mnist_ddp::report {
namespace {

using train::Span;
using train::TraceClock;

TEST_CASE("the timeline gathers every rank's spans into one Chrome trace on rank 0") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  const testing::TempDir folder;  // rank 0's is the one written to
  const std::string path = folder.file("trace.json");

  Timeline timeline(comm, /*enabled=*/true, config::StepRange{1, 1000});
  timeline.start();
  // Rank r records r + 1 steps of two phases and one allreduce each.
  for (int step = 1; step <= world.rank() + 1; ++step) {
    const TraceClock::time_point t0 = TraceClock::now();
    const TraceClock::time_point t1 = t0 + std::chrono::microseconds(500);
    const TraceClock::time_point t2 = t1 + std::chrono::microseconds(250);
    timeline.add(Span{"forward", t0, t1, step});
    timeline.add(Span{"backward", t1, t2, step});
    timeline.add(Span{"allreduce", t1, t2, step, /*bytes=*/4096});
  }
  config::TrainConfig cpu;
  cpu.device = config::Device::kCpu;
  CHECK(timeline.write(path,
                       distributed::plan_devices(config::device_request(cpu), world).layout) == 0);
  if (world.rank() != 0) return;

  std::ifstream file(path);
  REQUIRE(file);
  const nlohmann::json trace = nlohmann::json::parse(file);
  CHECK(trace["otherData"]["spans_dropped"] == 0);
  CHECK(trace["otherData"]["steps"] == "1:1000");
  std::vector<int> spans_per_rank(world.size());
  std::vector<int> named_processes(world.size());
  for (const nlohmann::json& event : trace["traceEvents"]) {
    const int pid = event["pid"];
    REQUIRE(pid >= 0);
    REQUIRE(pid < world.size());
    if (event["ph"] == "M") {
      if (event["name"] == "process_name") {
        ++named_processes[pid];
        CHECK(event["args"]["name"].get<std::string>().rfind("rank " + std::to_string(pid), 0) ==
              0);
      }
      continue;
    }
    CHECK(event["ph"] == "X");
    ++spans_per_rank[pid];
    const std::string name = event["name"];
    CHECK(event["ts"].get<double>() >= 0);
    CHECK(event["ts"].get<double>() < 60e6);  // on the shared clock: within this test's minute
    if (name == "allreduce") {
      CHECK(event["tid"] == 1);
      CHECK(event["cat"] == "communication");
      CHECK(event["args"]["bytes"] == 4096);
      CHECK(event["dur"].get<double>() == doctest::Approx(250));
    } else {
      CHECK(event["tid"] == 0);
      CHECK(event["dur"].get<double>() == doctest::Approx(name == "forward" ? 500 : 250));
    }
    CHECK(event["args"]["step"].get<int>() >= 1);
  }
  for (int rank = 0; rank < world.size(); ++rank) {
    CHECK(spans_per_rank[rank] == 3 * (rank + 1));
    CHECK(named_processes[rank] == 1);
  }
}

TEST_CASE("every phase's and span's name comes back from the trace") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  const testing::TempDir folder;
  const std::string path = folder.file("trace.json");
  Timeline timeline(comm, /*enabled=*/true, config::StepRange{1, 1000});
  timeline.start();
  std::vector<std::string> names(train::kPhaseNames.begin(), train::kPhaseNames.end());
  names.insert(names.end(), train::kOtherSpanNames.begin(), train::kOtherSpanNames.end());
  const TraceClock::time_point now = TraceClock::now();
  for (const std::string& name : names) timeline.add(Span{name.c_str(), now, now, /*step=*/1});
  config::TrainConfig cpu;
  cpu.device = config::Device::kCpu;
  timeline.write(path, distributed::plan_devices(config::device_request(cpu), world).layout);
  if (world.rank() != 0) return;
  std::ifstream file(path);
  REQUIRE(file);
  const nlohmann::json trace = nlohmann::json::parse(file);
  std::vector<std::string> read;
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["pid"] == 0) read.push_back(event["name"]);
  }
  CHECK(read == names);
}

TEST_CASE("the timeline keeps only the spans of the steps in its window") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  const testing::TempDir folder;
  const std::string path = folder.file("trace.json");
  Timeline timeline(comm, /*enabled=*/true, config::StepRange{3, 5});
  timeline.start();
  for (int step = 1; step <= 7; ++step) {
    const TraceClock::time_point now = TraceClock::now();
    timeline.add(Span{"forward", now, now, step});
    timeline.add(Span{"allreduce", now, now, step, /*bytes=*/8});
  }
  timeline.write(path, {});
  if (world.rank() != 0) return;

  std::ifstream file(path);
  REQUIRE(file);
  const nlohmann::json trace = nlohmann::json::parse(file);
  CHECK(trace["otherData"]["steps"] == "3:5");
  std::map<std::string, std::vector<int>> steps;  // span name -> steps of rank 0's spans
  for (const nlohmann::json& event : trace["traceEvents"]) {
    if (event["ph"] == "X" && event["pid"] == 0) {
      steps[event["name"]].push_back(event["args"]["step"]);
    }
  }
  CHECK(steps["forward"] == std::vector<int>{3, 4, 5});
  CHECK(steps["allreduce"] == std::vector<int>{3, 4, 5});
}

TEST_CASE("a disabled timeline writes nothing") {
  const distributed::World& world = testing::test_world();
  distributed::MpiCommunicator comm(world.comm());
  const testing::TempDir folder;
  Timeline timeline(comm, /*enabled=*/false, config::StepRange{1, 1000});
  timeline.start();
  timeline.add(Span{"forward", TraceClock::now(), TraceClock::now(), 1});
  timeline.write(folder.file("trace.json"), {});
  CHECK_FALSE(std::ifstream(folder.file("trace.json")).good());
}

}  // namespace
}  // namespace mnist_ddp::report
