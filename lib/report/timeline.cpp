// lib/report/timeline.cpp — spans as float64 rows (names as span_names() indices): one all_gather.
#include "report/timeline.hpp"

#include <algorithm>
#include <cstring>

#include <ATen/ATen.h>
#include <nlohmann/json.hpp>

#include "common/atomic_file.hpp"

namespace mnist_ddp::report {
namespace {

constexpr std::int64_t kFields = 5;
constexpr double kUnknownName = -1;

/// The phases' names, then the other spans'.
const std::vector<const char*>& span_names() {
  static const std::vector<const char*> names = [] {
    std::vector<const char*> all(train::kPhaseNames.begin(), train::kPhaseNames.end());
    all.insert(all.end(), train::kOtherSpanNames.begin(), train::kOtherSpanNames.end());
    return all;
  }();
  return names;
}

double name_index(const char* name) {
  const std::vector<const char*>& names = span_names();
  for (size_t i = 0; i < names.size(); ++i) {
    if (std::strcmp(names[i], name) == 0) return static_cast<double>(i);
  }
  return kUnknownName;
}

double microseconds(train::TraceClock::duration duration) {
  return std::chrono::duration<double, std::micro>(duration).count();
}

/// Allreduces overlap backward: they get a row (thread) of their own under each rank.
constexpr int kComputeRow = 0;
constexpr int kCommunicationRow = 1;

nlohmann::json metadata(const char* kind, int rank, int row, const std::string& name) {
  return {{"name", kind}, {"ph", "M"}, {"pid", rank}, {"tid", row}, {"args", {{"name", name}}}};
}

}  // namespace

void Timeline::start() {
  if (!enabled_) return;
  comm_.barrier();
  origin_ = train::TraceClock::now();
}

void Timeline::add(const train::Span& span) {
  if (!enabled_ || !steps_.contains(span.step)) return;
  if (static_cast<std::int64_t>(spans_.size()) >= kMaxSpans * kFields) {
    ++dropped_;
    return;
  }
  spans_.insert(spans_.end(), {name_index(span.name), microseconds(span.start - origin_),
                               microseconds(span.end - span.start), static_cast<double>(span.step),
                               static_cast<double>(span.bytes)});
}

std::int64_t Timeline::write(const std::string& path,
                             const std::vector<distributed::RankPlacement>& layout) {
  if (!enabled_) return 0;
  const std::int64_t count = static_cast<std::int64_t>(spans_.size()) / kFields;
  const at::Tensor counts = comm_.all_gather(at::tensor({count, dropped_}, at::kLong));
  const std::int64_t most = counts.select(1, 0).max().item<std::int64_t>();
  at::Tensor mine = at::zeros({most, kFields}, at::kDouble);
  std::copy(spans_.begin(), spans_.end(), mine.data_ptr<double>());
  const at::Tensor all = comm_.all_gather(mine);  // (ranks, most, kFields)
  if (comm_.rank() != 0) return 0;

  nlohmann::json events = nlohmann::json::array();
  std::int64_t dropped = 0;
  for (int rank = 0; rank < comm_.size(); ++rank) {
    const std::string host =
        rank < static_cast<int>(layout.size()) ? " (" + layout[rank].host + ")" : "";
    events.push_back(
        metadata("process_name", rank, kComputeRow, "rank " + std::to_string(rank) + host));
    events.push_back(metadata("process_sort_index", rank, kComputeRow, std::to_string(rank)));
    events.push_back(metadata("thread_name", rank, kComputeRow, "compute"));
    events.push_back(metadata("thread_name", rank, kCommunicationRow, "communication"));
    dropped += counts[rank][1].item<std::int64_t>();
    const auto* span = all[rank].data_ptr<double>();
    for (std::int64_t i = 0; i < counts[rank][0].item<std::int64_t>(); ++i, span += kFields) {
      const auto name = static_cast<std::int64_t>(span[0]);
      const char* text = name >= 0 ? span_names()[static_cast<size_t>(name)] : "other";
      const bool collective = std::strcmp(text, train::kAllreduceSpan) == 0;
      nlohmann::json args = {{"step", static_cast<std::int64_t>(span[3])}};
      if (collective) args["bytes"] = static_cast<std::int64_t>(span[4]);
      events.push_back({{"name", text},
                        {"cat", collective ? "communication" : "compute"},
                        {"ph", "X"},
                        {"pid", rank},
                        {"tid", collective ? kCommunicationRow : kComputeRow},
                        {"ts", span[1]},
                        {"dur", span[2]},
                        {"args", std::move(args)}});
    }
  }
  const nlohmann::json trace = {
      {"traceEvents", std::move(events)},
      {"displayTimeUnit", "ms"},
      {"otherData", {{"spans_dropped", dropped}, {"steps", config::to_string(steps_)}}}};
  write_file_atomically(path, trace.dump());
  return dropped;
}

}  // namespace mnist_ddp::report
