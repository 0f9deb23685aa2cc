// tests/unit/test_banner.cpp — the end-of-run rank table names a straggler only when one stands
// out: a rank more than 5% slower per step than the fastest is marked "slowest", and no rank is
// marked when all are within 5%.
#include <cstdio>
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
  stats.phases.forward = seconds;
  stats.peak_rss_mib = 200;
  return stats;
}

/// The table's lines for ranks taking these seconds for 100 steps, one rank per host line.
std::vector<std::string> rank_table(const std::vector<double>& seconds) {
  std::vector<RankStats> ranks;
  std::vector<distributed::RankPlacement> layout;
  for (int rank = 0; rank < static_cast<int>(seconds.size()); ++rank) {
    ranks.push_back(rank_stats(rank, seconds[rank]));
    layout.push_back({rank, "host" + std::to_string(rank), rank, "cpu", 1});
  }
  std::FILE* file = std::tmpfile();
  REQUIRE(file != nullptr);
  print_rank_table(Log(/*rank=*/0, /*all_ranks=*/false, file), ranks, layout);
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

}  // namespace
}  // namespace mnist_ddp::report
