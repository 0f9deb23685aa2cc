// lib/report/run_report.cpp — the page: summary, four charts, layout and configuration; no script.
#include "report/run_report.hpp"

#include <algorithm>
#include <sstream>

#include "common/atomic_file.hpp"
#include "common/error.hpp"
#include "report/svg_chart.hpp"

namespace mnist_ddp::report {
namespace {

// Colours that stay apart for colour-blind readers (Okabe-Ito), one per phase and series.
constexpr const char* kBlue = "#0072b2";
constexpr const char* kOrange = "#e69f00";
constexpr const char* kGreen = "#009e73";
constexpr const char* kVermilion = "#d55e00";
constexpr const char* kPurple = "#cc79a7";
constexpr const char* kSky = "#56b4e9";
constexpr const char* kGrey = "#b4b4b4";
constexpr const char* kYellow = "#f0e442";
constexpr const char* kBlack = "#000000";

// The Content-Security-Policy makes a browser refuse, and log, anything from outside the page.
constexpr const char* kHead = R"(<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body { font-family: system-ui, sans-serif; color: #222; margin: 0; background: #fafafa; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 32px; }
h1 { font-size: 22px; margin: 8px 0 4px; }
h2 { font-size: 17px; margin: 24px 0 8px; }
h3 { font-size: 14px; margin: 0 0 6px; }
.note { color: #666; font-size: 13px; margin: 6px 0; }
table { border-collapse: collapse; font-size: 13px; background: #fff; }
th, td { border: 1px solid #ddd; padding: 3px 10px; text-align: left; vertical-align: top; }
th { background: #f0f0f0; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.straggler td { font-weight: bold; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 16px; }
figure { margin: 0; padding: 10px; background: #fff; border: 1px solid #ddd; }
svg.chart { display: block; width: 100%; height: auto; }
.no-data { color: #777; font-style: italic; border: 1px dashed #ccc; padding: 40px 8px;
           text-align: center; margin: 0; }
.tables { display: flex; flex-wrap: wrap; gap: 24px; align-items: flex-start; }
</style>
)";

/// A two-column table of (name, value) rows, or a note when there are none.
std::string pairs_table(const std::vector<std::pair<std::string, std::string>>& rows,
                        const std::string& name_header, const std::string& empty_note) {
  if (rows.empty()) return "<p class=\"note\">" + html_escape(empty_note) + "</p>\n";
  std::string html = "<table>\n<tr><th>" + html_escape(name_header) + "</th><th>value</th></tr>\n";
  for (const auto& [name, value] : rows) {
    html += "<tr><td>" + html_escape(name) + "</td><td>" + html_escape(value) + "</td></tr>\n";
  }
  return html + "</table>\n";
}

/// The phases the chart stacks, in Phase order: each one some rank shows (PhaseTimes::shown).
std::vector<train::Phase> charted_phases(const RunReport& report) {
  std::vector<train::Phase> phases;
  for (const train::Phase phase : train::kPhases) {
    if (std::any_of(report.ranks.begin(), report.ranks.end(),
                    [phase](const ReportRank& rank) { return rank.phases.shown(phase); }))
      phases.push_back(phase);
  }
  return phases;
}

/// Where an eager phase is in phase_ms_per_step's values: every rank charts all of them first.
constexpr std::size_t at(train::Phase phase) { return static_cast<std::size_t>(phase); }

/// Milliseconds per step of each of `phases`, then what the phases leave of the measured step.
std::vector<double> phase_ms_per_step(const ReportRank& rank,
                                      const std::vector<train::Phase>& phases) {
  const double per_step = rank.steps > 0 ? 1000.0 / static_cast<double>(rank.steps) : 0.0;
  std::vector<double> ms;
  for (const train::Phase phase : phases) ms.push_back(rank.phases[phase] * per_step);
  double timed = 0;
  for (const double value : ms) timed += value;
  const double step_ms = rank.step_seconds_mean * 1000.0;
  // A sliver of rounding is not worth a segment; a real gap (logging, a slow barrier) is.
  ms.push_back(step_ms - timed > 0.005 * step_ms ? step_ms - timed : 0.0);
  return ms;
}

/// Compute time per step: everything but the wait for the allreduce.
double compute_ms(const std::vector<double>& ms) {
  using train::Phase;
  return ms[at(Phase::kData)] + ms[at(Phase::kForward)] + ms[at(Phase::kBackward)] +
         ms[at(Phase::kOptimizer)];
}

// Note [Finding the straggler]: synchronous averaging makes every rank's step as long as the
// slowest one's, but a straggler computes longer and waits less. The rank whose compute per step
// exceeds the median by 10% is marked; graphed steps hide the wait in the device phase.

/// The straggler among the ranks (one phase_ms_per_step each), or -1.
int find_straggler(const std::vector<std::vector<double>>& ms) {
  if (ms.size() < 2) return -1;
  std::vector<double> compute;
  for (const auto& rank : ms) compute.push_back(compute_ms(rank));
  std::vector<double> sorted = compute;
  std::sort(sorted.begin(), sorted.end());
  const double median = sorted.size() % 2
                            ? sorted[sorted.size() / 2]
                            : (sorted[sorted.size() / 2 - 1] + sorted[sorted.size() / 2]) / 2;
  const auto slowest = std::max_element(compute.begin(), compute.end()) - compute.begin();
  return compute[slowest] > 1.1 * median ? static_cast<int>(slowest) : -1;
}

std::string figure(const std::string& heading, const std::string& chart,
                   const std::string& note = "") {
  std::string html = "<figure>\n<h3>" + html_escape(heading) + "</h3>\n" + chart;
  if (!note.empty()) html += "<p class=\"note\">" + html_escape(note) + "</p>\n";
  return html + "</figure>\n";
}

std::string loss_chart(const RunReport& report) {
  LineChart chart;
  chart.id = "chart-loss";
  chart.x_label = "step";
  chart.y_label = "loss";
  chart.x_integer = true;
  chart.y_from_zero = true;
  chart.no_data_note = "no training step or epoch was recorded";
  LineSeries per_step{"train loss (step)", kSky, {}, /*markers=*/false, /*faint=*/true};
  for (const ReportStep& step : report.steps) {
    per_step.points.emplace_back(static_cast<double>(step.step), step.loss);
  }
  LineSeries train{"train loss (epoch)", kBlue, {}, /*markers=*/true};
  LineSeries test{"test loss (epoch)", kOrange, {}, /*markers=*/true};
  for (const ReportEpoch& epoch : report.epochs) {
    train.points.emplace_back(static_cast<double>(epoch.step), epoch.train_loss);
    test.points.emplace_back(static_cast<double>(epoch.step), epoch.test_loss);
  }
  chart.series = {per_step, train, test};
  return line_chart_html(chart);
}

// Over steps, like the loss chart, so --eval-every evaluations show where they were taken.
std::string accuracy_chart(const RunReport& report) {
  LineChart chart;
  chart.id = "chart-accuracy";
  chart.x_label = "step";
  chart.y_label = "test accuracy (%)";
  chart.x_integer = true;
  chart.y_max = 100;
  chart.no_data_note = "no epoch or step was evaluated";
  LineSeries between{"test accuracy (every N steps)", kSky, {}, /*markers=*/true};
  for (const ReportEvaluation& evaluation : report.evaluations) {
    between.points.emplace_back(static_cast<double>(evaluation.step),
                                100.0 * evaluation.test_accuracy);
  }
  LineSeries per_epoch{"test accuracy (epoch)", kGreen, {}, /*markers=*/true};
  for (const ReportEpoch& epoch : report.epochs) {
    per_epoch.points.emplace_back(static_cast<double>(epoch.step), 100.0 * epoch.test_accuracy);
  }
  chart.series = {between, per_epoch};
  return line_chart_html(chart);
}

std::string throughput_chart(const RunReport& report) {
  LineChart chart;
  chart.id = "chart-throughput";
  chart.x_label = "elapsed time (s)";
  chart.y_label = "images/s, all ranks";
  chart.y_from_zero = true;
  chart.no_data_note = "no training step or epoch was recorded";
  LineSeries per_step{"per step", kPurple, {}, /*markers=*/false, /*faint=*/true};
  for (const ReportStep& step : report.steps) {
    per_step.points.emplace_back(step.elapsed_s, step.images_per_sec);
  }
  LineSeries per_epoch{"per epoch", kVermilion, {}, /*markers=*/true};
  for (const ReportEpoch& epoch : report.epochs) {
    per_epoch.points.emplace_back(epoch.elapsed_s, epoch.images_per_sec);
  }
  chart.series = {per_step, per_epoch};
  return line_chart_html(chart);
}

std::string phase_chart(const RunReport& report, const std::vector<train::Phase>& phases,
                        const std::vector<std::vector<double>>& ms, int straggler) {
  // In Phase order.
  constexpr std::array<const char*, train::kPhaseCount> kPhaseColors = {
      kSky, kBlue, kGreen, kOrange, kPurple, kBlack, kVermilion, kYellow};
  StackedBarChart chart;
  chart.id = "chart-phases";
  chart.x_label = "milliseconds per training step";
  chart.unit = " ms";
  for (const train::Phase phase : phases)
    chart.segments.emplace_back(train::phase_label(phase), kPhaseColors[at(phase)]);
  chart.segments.emplace_back("other", kGrey);
  chart.no_data_note = "no rank recorded its step times";
  for (size_t r = 0; r < report.ranks.size(); ++r) {
    const ReportRank& rank = report.ranks[r];
    chart.bars.push_back(
        {"rank " + std::to_string(rank.rank),
         rank.host + ", local rank " + std::to_string(rank.local_rank) + ", " + rank.device, ms[r],
         static_cast<int>(r) == straggler});
  }
  return stacked_bar_chart_html(chart);
}

std::string straggler_note(const RunReport& report, const std::vector<std::vector<double>>& ms,
                           int straggler) {
  if (straggler < 0) return "";
  const ReportRank& rank = report.ranks[static_cast<size_t>(straggler)];
  return "Straggler: rank " + std::to_string(rank.rank) + " (" + rank.host + ") computes for " +
         format_number(compute_ms(ms[static_cast<size_t>(straggler)])) +
         " ms per step, more than the others; they wait for it in comm wait.";
}

std::string layout_table(const RunReport& report, const std::vector<std::vector<double>>& ms,
                         bool graphed, int straggler) {
  if (report.ranks.empty()) return "<p class=\"note\">No layout was recorded.</p>\n";
  std::ostringstream html;
  html << "<table>\n<tr><th>rank</th><th>host</th><th>local rank</th><th>device</th>"
          "<th>ms/step</th><th>compute ms/step</th><th>comm wait ms/step</th></tr>\n";
  const auto unless_graphed = [graphed](double value) {
    return graphed ? std::string("not measured") : format_number(value);
  };
  for (size_t r = 0; r < report.ranks.size(); ++r) {
    const ReportRank& rank = report.ranks[r];
    html << (static_cast<int>(r) == straggler ? "<tr class=\"straggler\">" : "<tr>")
         << "<td class=\"num\">" << rank.rank << "</td><td>" << html_escape(rank.host)
         << "</td><td class=\"num\">" << rank.local_rank << "</td><td>" << html_escape(rank.device)
         << "</td><td class=\"num\">" << format_number(rank.step_seconds_mean * 1000.0)
         << "</td><td class=\"num\">" << unless_graphed(compute_ms(ms[r]))
         << "</td><td class=\"num\">" << unless_graphed(ms[r][at(train::Phase::kCommWait)])
         << "</td></tr>\n";
  }
  html << "</table>\n";
  return html.str();
}

}  // namespace

void write_run_report(const std::string& path, const RunReport& report) {
  const std::string title = report.title.empty() ? "mnist_ddp run" : report.title;
  // Graphed steps do not time their collectives.
  const bool graphed = std::any_of(report.ranks.begin(), report.ranks.end(),
                                   [](const ReportRank& rank) { return rank.phases.graphed(); });
  const std::vector<train::Phase> phases = charted_phases(report);
  std::vector<std::vector<double>> ms;
  for (const ReportRank& rank : report.ranks) ms.push_back(phase_ms_per_step(rank, phases));
  const int straggler = graphed ? -1 : find_straggler(ms);

  std::ostringstream html;
  html << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
       << kHead << "<title>" << html_escape(title) << "</title>\n</head>\n<body>\n<main>\n"
       << "<h1>" << html_escape(title) << "</h1>\n"
       << "<h2>Summary</h2>\n"
       << pairs_table(report.summary, "result", "No summary was recorded.")
       << "<h2>Training</h2>\n<div class=\"charts\">\n"
       << figure("Loss", loss_chart(report),
                 report.steps.empty() ? "" : "Faint: every recorded step; dots: epoch means.")
       << figure("Test accuracy", accuracy_chart(report))
       << figure("Throughput", throughput_chart(report))
       << figure("Time per step by rank and phase", phase_chart(report, phases, ms, straggler),
                 straggler_note(report, ms, straggler))
       << "</div>\n<div class=\"tables\">\n<section>\n<h2>Layout</h2>\n"
       << layout_table(report, ms, graphed, straggler)
       << "</section>\n<section>\n<h2>Configuration</h2>\n"
       << pairs_table(report.config, "option", "No configuration was recorded.")
       << "</section>\n</div>\n"
       << "<p class=\"note\">Written by mnist_ddp " << MNIST_DDP_VERSION
       << ". The page is self-contained: no script, nothing loaded from elsewhere.</p>\n"
       << "</main>\n</body>\n</html>\n";
  try {
    write_file_atomically(path, html.str());
  } catch (const Error& e) {
    throw UsageError("cannot write the run report '" + path + "': " + e.what());
  }
}

}  // namespace mnist_ddp::report
