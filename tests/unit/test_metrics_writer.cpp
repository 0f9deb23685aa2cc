// tests/unit/test_metrics_writer.cpp — MetricsWriter's file: a new run empties it, a resumed run
// appends after closing a cut-short line, a symbolic link is refused, the mode comes from the
// umask, and an empty path writes nothing; a graphed window's phases; a run refused for another
// output leaves the file alone.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include "common/error.hpp"
#include "common/log.hpp"
#include "report/metrics_writer.hpp"
#include "report/run_outputs.hpp"
#include "support/cpu_plan.hpp"
#include "support/file_modes.hpp"
#include "support/folder_names.hpp"
#include "support/idx_writer.hpp"
#include "support/mirror_communicator.hpp"

namespace mnist_ddp::testing {
namespace {

using report::MetricsWriter;

/// Writes one summary record of `steps` steps to `path` through a new writer.
void write_summary(const std::string& path, std::int64_t steps, bool append) {
  MetricsWriter writer(path, report::RunFacts{}, append);
  train::TrainSummary summary;
  summary.steps = steps;
  writer.write_summary(summary, /*wall_seconds=*/1, /*startup_seconds=*/0);
}

/// The lines of the file at `path`.
std::vector<std::string> lines_of(const std::string& path) {
  std::vector<std::string> lines;
  const std::string text = read_bytes(path);
  for (std::size_t start = 0; start < text.size();) {
    const std::size_t end = text.find('\n', start);
    REQUIRE(end != std::string::npos);  // every line ends with a newline
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::int64_t steps_of(const std::string& line) { return nlohmann::json::parse(line)["steps"]; }

}  // namespace

TEST_SUITE("MetricsWriter") {
  TEST_CASE("metrics: a new run empties the file; a resumed run appends to it") {
    TempDir dir;
    const std::string path = dir.file("m.jsonl");
    write_summary(path, 4, /*append=*/false);
    write_summary(path, 8, /*append=*/true);
    std::vector<std::string> lines = lines_of(path);
    REQUIRE(lines.size() == 2);
    CHECK(steps_of(lines[0]) == 4);
    CHECK(steps_of(lines[1]) == 8);

    write_summary(path, 2, /*append=*/false);
    lines = lines_of(path);
    REQUIRE(lines.size() == 1);
    CHECK(steps_of(lines[0]) == 2);

    write_summary(dir.file("new.jsonl"), 3, /*append=*/true);  // appending creates a missing file
    CHECK(lines_of(dir.file("new.jsonl")).size() == 1);
  }

  TEST_CASE("metrics: a resumed run starts on a new line after a record cut short") {
    TempDir dir;
    const std::string path = dir.file("m.jsonl");
    std::ofstream(path) << "{\"steps\":1}\n{\"ste";
    write_summary(path, 8, /*append=*/true);
    const std::vector<std::string> lines = lines_of(path);
    REQUIRE(lines.size() == 3);
    CHECK(lines[1] == "{\"ste");
    CHECK(steps_of(lines[2]) == 8);
  }

  TEST_CASE("metrics: a symbolic link is refused, its target untouched") {
    TempDir dir;
    const std::string target = dir.file("target");
    const std::string link = dir.file("link.jsonl");
    std::ofstream(target) << "not metrics";
    std::filesystem::create_symlink(target, link);
    for (const bool append : {false, true}) {
      INFO("append ", append);
      const std::string message =
          error_message<UsageError>([&] { write_summary(link, 8, append); });
      CHECK(contains(message, "--metrics-file '" + link + "' is a symbolic link"));
      CHECK(std::filesystem::is_symlink(link));
      CHECK(read_bytes(target) == "not metrics");
    }
  }

  TEST_CASE("metrics: the file gets mode 0666 less the umask") {
    TempDir dir;
    for (const UmaskCase& c : umask_cases()) {
      INFO(c.name);
      const ScopedUmask scoped(c.mask);
      const std::string path = dir.file(std::string("m") + c.name);
      write_summary(path, 1, /*append=*/false);
      CHECK(permissions(path) == c.mode);
    }
  }

  TEST_CASE("metrics: a log window's phases; launch and device only where steps were graphed") {
    TempDir dir;
    const std::string path = dir.file("m.jsonl");
    MetricsWriter writer(path, report::RunFacts{}, /*append=*/false);
    train::StepReport step;
    step.window = train::LogWindow{};
    step.window->phases[train::Phase::kForward] = 0.5;
    writer.write_step(step);
    step.window->phases[train::Phase::kLaunch] = 0.25;
    step.window->phases[train::Phase::kDevice] = 0.75;
    writer.write_step(step);
    const std::vector<std::string> lines = lines_of(path);
    REQUIRE(lines.size() == 2);
    const nlohmann::json eager = nlohmann::json::parse(lines[0])["phases"];
    CHECK(eager == nlohmann::json{{"data_s", 0.0},
                                  {"forward_s", 0.5},
                                  {"backward_s", 0.0},
                                  {"comm_wait_s", 0.0},
                                  {"optimizer_s", 0.0}});
    const nlohmann::json graphed = nlohmann::json::parse(lines[1])["phases"];
    CHECK(graphed.size() == 7);
    CHECK(graphed["launch_s"] == 0.25);
    CHECK(graphed["device_s"] == 0.75);
  }

  TEST_CASE("metrics: an empty path writes nothing; a folder is a UsageError naming it") {
    TempDir dir;
    write_summary("", 1, /*append=*/false);
    CHECK(folder_names(dir.path()).empty());
    const std::string message =
        error_message<UsageError>([&] { write_summary(dir.path(), 1, /*append=*/false); });
    CHECK(contains(message, "--metrics-file '" + dir.path() + "'"));
  }

  TEST_CASE("metrics: a run whose other output file cannot be written leaves the file alone") {
    TempDir dir;
    const std::string path = dir.file("metrics.jsonl");
    write_summary(path, 5, /*append=*/false);
    const std::string earlier = read_bytes(path);
    const std::string unwritable = dir.file("missing/output");
    MirrorCommunicator comm;
    const Log log(0, /*all_ranks=*/false);
    const std::pair<std::string config::TrainConfig::*, const char*> outputs[] = {
        {&config::TrainConfig::timeline, "--timeline"},
        {&config::TrainConfig::report, "--report"},
        {&config::TrainConfig::export_model, "--export-model"}};
    for (const auto& output : outputs) {
      const char* option = output.second;
      CAPTURE(option);
      config::TrainConfig config;
      config.metrics_file = path;
      config.*output.first = unwritable;
      const std::string message = error_message<UsageError>(
          [&] { report::RunOutputs(config, cpu_plan(comm), comm, log, /*resumed=*/false); });
      CHECK(contains(message, std::string(option) + " '" + unwritable + "'"));
      CHECK(read_bytes(path) == earlier);
    }
  }
}

}  // namespace mnist_ddp::testing
