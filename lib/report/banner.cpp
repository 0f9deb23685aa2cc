// lib/report/banner.cpp — fixed-width tables in the style of nccl-tests.
#include "report/banner.hpp"

#include <optional>
#include <string>

#include "config/options.hpp"
#include "report/versions.hpp"

namespace mnist_ddp::report {

void print_banner(const Log& log, const config::TrainConfig& c) {
  for (const auto& [component, version] : component_versions()) {
    log.line("# %-16s %s", component.c_str(), version.c_str());
  }
  log.line("# configuration");
  for (const auto& [name, value] : config::describe_config(c)) {
    log.line("#   %-18s %s", name.c_str(), value.c_str());
  }
}

void print_execution(const Log& log, const distributed::DevicePlan& plan,
                     const config::TrainConfig& c, const train::GraphPlan& graphs) {
  std::string transport = config::to_string(plan.backend);
  if (!plan.replicas.empty()) {
    transport = "none: " + std::to_string(plan.replicas.size()) +
                " replica(s), gradients summed on " + plan.device.str() + " by device copies";
  } else if (plan.on_cuda() && plan.backend == config::Backend::kMpi) {
    transport += " (CUDA tensors staged through host memory)";
  }
  log.line("# execution: --mode %s on %s, precision %s, gradient transport %s",
           config::to_string(c.mode).c_str(), plan.on_cuda() ? "cuda" : "cpu",
           config::to_string(c.precision).c_str(), transport.c_str());
  if (!plan.note.empty()) log.line("# note: %s", plan.note.c_str());
  if (plan.on_cuda() || graphs.capture) {  // on the CPU only when rehearsed
    log.line("# cuda graph: %s (%s)", graphs.capture ? "on" : "off", graphs.reason.c_str());
  }
}

void print_layout(const Log& log, const std::vector<distributed::RankPlacement>& layout,
                  int node_count) {
  log.line("# layout: %zu rank%s on %d node%s", layout.size(), layout.size() == 1 ? "" : "s",
           node_count, node_count == 1 ? "" : "s");
  // NCCL's own host, only where a rank sets NCCL_HOSTID (Note [Several NCCL ranks on one GPU]).
  const bool nccl_hosts =
      std::any_of(layout.begin(), layout.end(), [](const auto& p) { return !p.nccl_host.empty(); });
  const auto nccl_column = [nccl_hosts](const std::string& text) {
    return nccl_hosts
               ? text + std::string(std::max<size_t>(text.size(), 16) - text.size(), ' ') + ' '
               : std::string();
  };
  // The device last: a GPU's name and PCI bus id make it the widest column.
  log.line("# %6s  %-24s %10s %7s %5s  %s%s", "rank", "host", "local_rank", "threads", "cores",
           nccl_column("nccl_host").c_str(), "device");
  std::string crowded;
  for (const distributed::RankPlacement& p : layout) {
    log.line("# %6d  %-24s %10d %7d %5d  %s%s", p.rank, p.host.c_str(), p.local_rank, p.threads,
             p.cores, nccl_column(p.nccl_host).c_str(), p.device.c_str());
    if (p.threads > p.cores) crowded += (crowded.empty() ? "" : ", ") + std::to_string(p.rank);
  }
  // mpirun binds each of up to two ranks to one core by default: extra threads gain nothing.
  if (!crowded.empty()) {
    log.line(
        "# note: rank(s) %s run more threads than their CPU binding gives them cores; bind "
        "each rank to as many cores as --threads (mpirun --map-by slot:PE=N, or --bind-to "
        "none)",
        crowded.c_str());
  }
}

void print_epoch_header(const Log& log) {
  log.line("# %5s %8s %11s %10s %9s %11s %8s %8s", "epoch", "step", "train_loss", "test_loss",
           "test_acc", "throughput", "train", "elapsed");
  log.line("# %5s %8s %11s %10s %9s %11s %8s %8s", "", "", "", "", "(%)", "(img/s)", "(s)", "(s)");
}

void print_epoch(const Log& log, const train::EpochReport& r) {
  log.line("  %5lld %8lld %11.6f %10.6f %9.2f %11.0f %8.2f %8.2f%s",
           static_cast<long long>(r.epoch), static_cast<long long>(r.step), r.train_loss,
           r.test.loss, 100.0 * r.test.accuracy, r.images_per_sec, r.train_seconds,
           r.elapsed_seconds,
           r.complete         ? ""
           : r.target_reached ? "  (stopped at --target-accuracy)"
                              : "  (stopped by --max-steps)");
}

bool print_summary(const Log& log, const train::TrainSummary& s, double min_accuracy,
                   double wall_seconds) {
  log.line("# steps %lld, %lld training images in %.2f s: %.0f img/s; wall %.2f s",
           static_cast<long long>(s.steps), static_cast<long long>(s.images), s.train_seconds,
           s.images_per_sec, wall_seconds);
  const bool ok = s.test.accuracy >= min_accuracy;
  const std::string verdict =
      ok ? "OK" : string_printf("BELOW --min-accuracy %.2f%%", 100 * min_accuracy);
  log.line("# final test_acc %.2f%% (%lld/%lld) %s", 100.0 * s.test.accuracy,
           static_cast<long long>(s.test.correct), static_cast<long long>(s.test.count),
           verdict.c_str());
  return ok;
}

void print_timing(const Log& log, int rank, double startup_seconds, const train::PhaseTimes& p) {
  const double total = std::max(p.total(), 1e-12);
  std::string shares;
  for (const train::Phase phase : train::kPhases) {
    if (!p.shown(phase)) continue;
    shares += string_printf("%s%s %.0f%%", shares.empty() ? "" : ", ",
                            train::phase_label(phase).c_str(), 100 * p[phase] / total);
  }
  log.line("# first training step %.2f s after launch; training time on rank %d: %s%s",
           startup_seconds, rank, shares.c_str(),
           p.graphed() ? " (graphed steps: their collectives' share is not measured)" : "");
}

void print_rank_table(const Log& log, const std::vector<RankStats>& ranks,
                      const std::vector<distributed::RankPlacement>& layout) {
  // Name a straggler only when it stands out from the fastest rank by more than noise.
  double slowest = 0;
  double fastest = 1e300;
  for (const RankStats& r : ranks) {
    slowest = std::max(slowest, r.step_seconds());
    fastest = std::min(fastest, r.step_seconds());
  }
  const bool straggler = slowest > 1.05 * fastest;
  log.line("# %6s  %-24s %11s %10s %10s %10s", "rank", "host", "throughput", "step", "comm_wait",
           "peak_rss");
  log.line("# %6s  %-24s %11s %10s %10s %10s", "", "", "(img/s)", "(ms)", "(%)", "(MiB)");
  for (const RankStats& r : ranks) {
    const std::string& host = r.rank < static_cast<int>(layout.size()) ? layout[r.rank].host : "?";
    const std::optional<double> share = r.phases.comm_share();  // graphed steps: not measured
    const std::string comm_share = share ? string_printf("%.1f", 100 * *share) : "unknown";
    log.line("# %6d  %-24s %11.0f %10.3f %10s %10.0f%s", r.rank, host.c_str(), r.images_per_sec(),
             1000 * r.step_seconds(), comm_share.c_str(), r.peak_rss_mib,
             straggler && r.step_seconds() == slowest ? "  slowest" : "");
  }
}

void print_milestones(const Log& log, const std::vector<Milestone>& milestones) {
  std::string text;
  for (const Milestone& m : milestones) {
    const char* separator = text.empty() ? "" : ", ";
    text += m.reached
                ? string_printf("%s%.0f%% at %.2f s (step %lld, epoch %lld)", separator,
                                100 * m.accuracy, m.train_seconds, static_cast<long long>(m.step),
                                static_cast<long long>(m.epoch))
                : string_printf("%s%.0f%% not reached", separator, 100 * m.accuracy);
  }
  log.line("# time to test accuracy: %s", text.c_str());
}

void print_target(const Log& log, double target_accuracy, const train::TrainSummary& summary) {
  if (target_accuracy <= 0) return;
  if (!summary.target) {
    log.line("# target test accuracy %.2f%% not reached (final %.2f%%)", 100 * target_accuracy,
             100 * summary.test.accuracy);
    return;
  }
  const train::EvalReport& t = *summary.target;
  log.line(
      "# target test accuracy %.2f%% reached at step %lld (epoch %lld): %.2f%% after %.2f s of "
      "training, %.2f s from launch; training stopped there",
      100 * target_accuracy, static_cast<long long>(t.step), static_cast<long long>(t.epoch),
      100 * t.test.accuracy, t.train_seconds, t.launch_seconds);
}

}  // namespace mnist_ddp::report
