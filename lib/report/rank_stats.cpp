// lib/report/rank_stats.cpp — one all_gather of a few float64 values per rank.
#include "report/rank_stats.hpp"

#include <sys/resource.h>

#include <ATen/ATen.h>

namespace mnist_ddp::report {

double peak_rss_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024.0;  // Linux reports KiB
}

std::vector<RankStats> gather_rank_stats(distributed::Communicator& comm,
                                         const train::TrainSummary& summary,
                                         std::int64_t steps_trained) {
  std::vector<double> mine = {static_cast<double>(steps_trained),
                              static_cast<double>(summary.images) / comm.size(), peak_rss_mib()};
  mine.insert(mine.end(), summary.phases.seconds.begin(), summary.phases.seconds.end());
  const at::Tensor all = comm.all_gather(at::tensor(mine, at::kDouble)).contiguous();
  std::vector<RankStats> stats;
  for (int rank = 0; rank < comm.size(); ++rank) {
    const auto* v = all[rank].data_ptr<double>();
    RankStats s;
    s.rank = rank;
    s.steps = static_cast<std::int64_t>(v[0]);
    s.images = static_cast<std::int64_t>(v[1]);
    s.peak_rss_mib = v[2];
    std::copy_n(v + 3, train::kPhaseCount, s.phases.seconds.begin());
    stats.push_back(s);
  }
  return stats;
}

}  // namespace mnist_ddp::report
