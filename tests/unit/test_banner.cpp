// tests/unit/test_banner.cpp — the end-of-run rank table names a straggler only when one stands
// out: a rank more than 5% slower per step than the fastest is marked "slowest", and no rank is
// marked when all are within 5%, and a graphed rank's comm wait share is unknown; the layout table
// notes ranks with more threads than cores.
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "common/log.hpp"
#include "report/banner.hpp"

namespace mnist_ddp::report {
namespace {

/// 100 steps of 64 images in `seconds` (all of it forward, which is enough for the table).
RankStats rank_stats(int rank, double seconds) {
  RankStats stats;
  stats.rank = rank;
  stats.steps = 100;
  stats.images = 6400;
  stats.phases[train::Phase::kForward] = seconds;
  stats.peak_rss_mib = 200;
  return stats;
}

/// The lines that `print` writes through rank 0's log.
std::vector<std::string> printed(const std::function<void(const Log&)>& print) {
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  print(Log(/*rank=*/0, /*all_ranks=*/false, file));
  std::vector<std::string> lines(1);
  std::rewind(file);
  for (int c; (c = std::fgetc(file)) != EOF;) {
    if (c == '\n') {
      lines.emplace_back();
    } else {
      lines.back() += static_cast<char>(c);
    }
  }
  std::fclose(file);
  lines.pop_back();  // after the last newline
  return lines;
}

/// The table's lines for ranks taking these seconds for 100 steps, one rank per host line.
std::vector<std::string> rank_table(const std::vector<double>& seconds) {
  std::vector<RankStats> ranks;
  std::vector<distributed::RankPlacement> layout;
  for (int rank = 0; rank < static_cast<int>(seconds.size()); ++rank) {
    ranks.push_back(rank_stats(rank, seconds[rank]));
    layout.push_back({rank, "host" + std::to_string(rank), rank, "cpu", 1, 1, ""});
  }
  return printed([&](const Log& log) { print_rank_table(log, ranks, layout); });
}

/// The ranks whose line ends in "slowest" (the two header lines come first).
std::vector<int> marked(const std::vector<std::string>& lines) {
  std::vector<int> ranks;
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    const std::string mark = "  slowest";
    if (line.size() > mark.size() &&
        line.compare(line.size() - mark.size(), mark.size(), mark) == 0) {
      ranks.push_back(static_cast<int>(i - 2));
    }
  }
  return ranks;
}

TEST_CASE("banner rank table: one line per rank in rank order, after two header lines") {
  const std::vector<std::string> lines = rank_table({1.0, 1.0, 1.0});
  REQUIRE(lines.size() == 5);
  CHECK(lines[0].find("throughput") != std::string::npos);
  CHECK(lines[1].find("(img/s)") != std::string::npos);
  for (int rank = 0; rank < 3; ++rank) {
    CHECK(lines[2 + rank].find("host" + std::to_string(rank)) != std::string::npos);
  }
  // 100 steps in 1 s: 10 ms a step, 6400 img/s.
  CHECK(lines[2].find(" 6400     10.000 ") != std::string::npos);
}

TEST_CASE("banner rank table: no rank is marked when all are within 5% of the fastest") {
  CHECK(marked(rank_table({1.0, 1.0, 1.0})).empty());
  CHECK(marked(rank_table({1.0, 1.04, 1.02, 1.0})).empty());
  CHECK(marked(rank_table({1.0})).empty());
}

TEST_CASE("banner rank table: the rank more than 5% slower than the fastest is marked") {
  CHECK(marked(rank_table({1.0, 1.0, 1.06, 1.0})) == std::vector<int>{2});
  CHECK(marked(rank_table({1.3, 1.0, 1.1})) == std::vector<int>{0});
  CHECK(marked(rank_table({1.0, 2.0})) == std::vector<int>{1});
  // Only the slowest, not every rank above the threshold.
  CHECK(marked(rank_table({1.0, 1.2, 1.5, 1.1})) == std::vector<int>{2});
}

TEST_CASE("banner: a graphed rank's comm wait share is unknown, its timing names launch, device") {
  std::vector<RankStats> ranks = {rank_stats(0, 1.0), rank_stats(1, 1.0)};
  ranks[1].phases[train::Phase::kForward] = 0.25;
  ranks[1].phases[train::Phase::kLaunch] = 0.25;
  ranks[1].phases[train::Phase::kDevice] = 0.5;
  const std::vector<distributed::RankPlacement> layout = {{0, "a", 0, "cpu", 1, 1, ""},
                                                          {1, "b", 0, "cpu", 1, 1, ""}};
  const std::vector<std::string> table =
      printed([&](const Log& log) { print_rank_table(log, ranks, layout); });
  REQUIRE(table.size() == 4);
  CHECK(table[2].find("     10.000        0.0 ") != std::string::npos);
  CHECK(table[3].find("     10.000    unknown ") != std::string::npos);
  const std::vector<std::string> timing =
      printed([&](const Log& log) { print_timing(log, 1, 0.5, ranks[1].phases); });
  REQUIRE(timing.size() == 1);
  CHECK(timing[0] ==
        "# first training step 0.50 s after launch; training time on rank 1: data 0%, forward "
        "25%, backward 0%, comm wait 0%, optimizer 0%, launch 25%, device 50% (graphed steps: "
        "their collectives' share is not measured)");
  const std::string eager =
      printed([&](const Log& log) { print_timing(log, 0, 0.5, ranks[0].phases); })[0];
  CHECK(eager.substr(eager.size() - 14) == ", optimizer 0%");
}

TEST_CASE("layout table: a row per rank with its threads and cores; a note where threads crowd") {
  const std::vector<distributed::RankPlacement> roomy = {{0, "a", 0, "cpu", 2, 2, ""},
                                                         {1, "b", 0, "cpu", 1, 4, ""}};
  const std::vector<std::string> lines =
      printed([&](const Log& log) { print_layout(log, roomy, 2); });
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "# layout: 2 ranks on 2 nodes");
  CHECK(lines[1] == "#   rank  host                     local_rank threads cores  device");
  CHECK(lines[3] == "#      1  b                                 0       1     4  cpu");
  const std::vector<distributed::RankPlacement> bound = {{0, "a", 0, "cpu", 2, 1, ""},
                                                         {1, "a", 1, "cpu", 2, 1, ""}};
  const std::vector<std::string> crowded =
      printed([&](const Log& log) { print_layout(log, bound, 1); });
  REQUIRE(crowded.size() == 5);
  CHECK(crowded[4].rfind("# note: rank(s) 0, 1 run more threads than their CPU binding gives "
                         "them cores",
                         0) == 0);
}

TEST_CASE("layout table: NCCL's host in a column of its own where a rank sets NCCL_HOSTID") {
  const std::vector<distributed::RankPlacement> one_gpu = {{0, "a", 0, "cuda:0", 1, 1, "rank0"},
                                                           {1, "a", 1, "cuda:0", 1, 1, "rank1"}};
  const std::vector<std::string> lines =
      printed([&](const Log& log) { print_layout(log, one_gpu, 1); });
  REQUIRE(lines.size() == 4);
  CHECK(lines[1] ==
        "#   rank  host                     local_rank threads cores  nccl_host        device");
  CHECK(lines[3] ==
        "#      1  a                                 1       1     1  rank1            cuda:0");
}

}  // namespace
}  // namespace mnist_ddp::report
