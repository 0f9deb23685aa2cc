// tests/unit/test_run_report.cpp — write_run_report: a complete page with every chart and the
// marks its input calls for, escaped run strings, nothing external, "no data" notes for empty
// series, non-finite values left out, the straggler marked, errors that name the path.
#include <cmath>
#include <limits>
#include <string>

#include <doctest/doctest.h>

#include "common/error.hpp"
#include "report/run_report.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using report::ReportEpoch;
using report::ReportRank;
using report::ReportStep;
using report::RunReport;

const char* const kChartIds[] = {"chart-loss", "chart-accuracy", "chart-throughput",
                                 "chart-phases"};

/// How often `part` occurs in `text`.
int count(const std::string& text, const std::string& part) {
  int found = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) {
    ++found;
  }
  return found;
}

/// The `<svg id="ID" ...> ... </svg>` element of the page; empty when there is none.
std::string chart_svg(const std::string& page, const std::string& id) {
  const size_t begin = page.find("<svg id=\"" + id + "\"");
  if (begin == std::string::npos) return "";
  const size_t end = page.find("</svg>", begin);
  REQUIRE(end != std::string::npos);
  return page.substr(begin, end + 6 - begin);
}

/// A rank whose five phases take `compute_ms` (all but comm wait) and `wait_ms` per step over
/// 100 steps, with `other_ms` per step outside the phases.
ReportRank make_rank(int rank, double compute_ms, double wait_ms, double other_ms) {
  ReportRank result;
  result.rank = rank;
  result.host = "node" + std::to_string(rank / 2);
  result.local_rank = rank % 2;
  result.device = "cpu";
  result.steps = 100;
  // Seconds over 100 steps: 0.1 s total is 1 ms per step.
  result.phases[train::Phase::kData] = 0.1 * compute_ms * 0.1;
  result.phases[train::Phase::kForward] = 0.1 * compute_ms * 0.3;
  result.phases[train::Phase::kBackward] = 0.1 * compute_ms * 0.5;
  result.phases[train::Phase::kOptimizer] = 0.1 * compute_ms * 0.1;
  result.phases[train::Phase::kCommWait] = 0.1 * wait_ms;
  result.step_seconds_mean = (compute_ms + wait_ms + other_ms) / 1000.0;
  return result;
}

/// `epochs` epochs, `steps` recorded steps and two ranks, the second with untimed time per step.
RunReport make_report(int epochs, int steps) {
  RunReport report;
  report.title = "mnist_ddp cnn, 2 ranks";
  report.config = {{"model", "cnn"}, {"batch-size", "64"}};
  for (int e = 1; e <= epochs; ++e) {
    report.epochs.push_back({10 * e, 1.0 / e, 1.2 / e, 0.9 + 0.02 * e, 5000.0 + e, 2.0 * e});
  }
  for (int s = 1; s <= steps; ++s) {
    report.steps.push_back({s, 0.2 * s, 2.3 / s, 4000.0 + s});
  }
  report.ranks = {make_rank(0, 10, 2, /*other_ms=*/0), make_rank(1, 10, 2, /*other_ms=*/3)};
  report.summary = {{"final test accuracy", "96.0%"}, {"wall time", "12.3 s"}};
  return report;
}

/// Writes `report` to a file and reads it back.
std::string written(const RunReport& report) {
  TempDir dir;
  report::write_run_report(dir.file("report.html"), report);
  return read_bytes(dir.file("report.html"));
}

}  // namespace

TEST_SUITE("write_run_report") {
  TEST_CASE("a complete page with every chart and the marks the input calls for") {
    const std::string page = written(make_report(/*epochs=*/3, /*steps=*/25));
    CHECK(page.rfind("<!DOCTYPE html>\n", 0) == 0);
    CHECK(page.size() > 8);
    CHECK(page.substr(page.size() - 8) == "</html>\n");
    CHECK(count(page, "<html") == 1);
    CHECK(contains(page, "<title>mnist_ddp cnn, 2 ranks</title>"));
    for (const char* id : kChartIds) {
      INFO("chart ", id);
      CHECK(count(page, std::string("id=\"") + id + "\"") == 1);
      CHECK_FALSE(chart_svg(page, id).empty());
    }
    CHECK(count(page, "<svg") == 4);
    CHECK_FALSE(contains(page, "class=\"no-data\""));

    // Loss: one line per step series, train per epoch and test per epoch; a dot per epoch on
    // the two epoch series.
    const std::string loss = chart_svg(page, "chart-loss");
    CHECK(count(loss, "<polyline") == 3);
    CHECK(count(loss, "<circle class=\"marker\"") == 2 * 3);
    const size_t points = loss.find("points=\"");
    const std::string step_points = loss.substr(points, loss.find('"', points + 8) - points);
    CHECK(count(step_points, ",") == 25);  // the per-step line, first: one x,y pair per step

    const std::string accuracy = chart_svg(page, "chart-accuracy");
    CHECK(count(accuracy, "<polyline") == 1);
    CHECK(count(accuracy, "<circle class=\"marker\"") == 3);
    CHECK(contains(accuracy, ">test accuracy (%)<"));
    CHECK_FALSE(contains(accuracy, "every N steps"));  // no evaluations between epochs

    const std::string throughput = chart_svg(page, "chart-throughput");
    CHECK(count(throughput, "<polyline") == 2);
    CHECK(count(throughput, "<circle class=\"marker\"") == 3);

    // Phases: rank 0's five phases fill its step; rank 1 also has 3 ms outside them ("other").
    const std::string phases = chart_svg(page, "chart-phases");
    CHECK(count(phases, "<rect class=\"segment\"") == 5 + 6);
    CHECK(count(phases, "<rect class=\"swatch\"") == 6);
    CHECK(contains(phases, "rank 1 other: 3 ms"));
    CHECK(contains(phases, "15 ms</text>"));  // rank 1's total: 10 + 2 + 3

    // Tables: summary, layout and configuration, in the given order.
    CHECK(contains(page, "<td>final test accuracy</td><td>96.0%</td>"));
    CHECK(page.find("<td>model</td>") < page.find("<td>batch-size</td>"));
    CHECK(contains(page, "<td>node0</td>"));
  }

  TEST_CASE("every string from the run is escaped") {
    RunReport report = make_report(2, 5);
    report.title = "run <b>&</b>";
    report.config.emplace_back("note", "<script>alert(\"x\")</script>");
    report.ranks[1].host = "evil<img src=x onerror=alert(1)>";
    report.ranks[1].device = "cuda:0 'quoted'";
    report.summary.emplace_back("<i>label</i>", "a & b");
    const std::string page = written(report);
    CHECK(contains(page, "<td>&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;</td>"));
    CHECK(contains(page, "<h1>run &lt;b&gt;&amp;&lt;/b&gt;</h1>"));
    CHECK(contains(page, "evil&lt;img src=x onerror=alert(1)&gt;"));
    CHECK(contains(page, "cuda:0 &#39;quoted&#39;"));
    CHECK(contains(page, "<td>&lt;i&gt;label&lt;/i&gt;</td><td>a &amp; b</td>"));
    // The page has no script of its own, so any "<script" or "<img" came from the run.
    CHECK_FALSE(contains(page, "<script"));
    CHECK_FALSE(contains(page, "<img"));
    CHECK_FALSE(contains(page, "<i>"));
  }

  TEST_CASE("the page is self-contained") {
    const std::string page = written(make_report(3, 25));
    CHECK_FALSE(contains(page, "http://"));
    CHECK_FALSE(contains(page, "https://"));
    CHECK_FALSE(contains(page, "src="));
    CHECK_FALSE(contains(page, "href="));
    CHECK_FALSE(contains(page, "url("));
    CHECK_FALSE(contains(page, "@import"));
    CHECK(contains(page, "Content-Security-Policy\" content=\"default-src 'none'"));
  }

  TEST_CASE("empty series give a note instead of a chart") {
    RunReport report;
    const std::string page = written(report);
    CHECK(count(page, "class=\"no-data\"") == 4);
    for (const char* id : kChartIds) {
      INFO("chart ", id);
      CHECK(contains(page, std::string("<p class=\"no-data\" id=\"") + id + "\">No data: "));
    }
    CHECK_FALSE(contains(page, "<svg"));
    CHECK_FALSE(contains(page, "<polyline"));
    CHECK(contains(page, "<title>mnist_ddp run</title>"));  // the default title
    CHECK(contains(page, "No configuration was recorded."));
    CHECK(page.substr(page.size() - 8) == "</html>\n");
  }

  TEST_CASE("evaluations between epochs join the accuracy chart at their steps") {
    RunReport report = make_report(/*epochs=*/2, /*steps=*/0);
    // Every 4 steps of two 10-step epochs: 4 evaluations, from 96% to 99%.
    for (int step = 4; step <= 16; step += 4) {
      report.evaluations.push_back({step, 0.5, 0.95 + 0.01 * step / 4});
    }
    const std::string accuracy = chart_svg(written(report), "chart-accuracy");
    CHECK(count(accuracy, "<polyline") == 2);
    CHECK(count(accuracy, "<circle class=\"marker\"") == 4 + 2);
    CHECK(contains(accuracy, ">test accuracy (every N steps)<"));
    CHECK(contains(accuracy, ">test accuracy (epoch)<"));
    CHECK(contains(accuracy, ">step<"));
  }

  TEST_CASE("one epoch and no steps: dots, since a line needs two points") {
    RunReport report = make_report(/*epochs=*/1, /*steps=*/0);
    report.ranks.clear();
    const std::string page = written(report);
    const std::string loss = chart_svg(page, "chart-loss");
    CHECK(count(loss, "<polyline") == 2);
    CHECK(count(loss, "<circle class=\"marker\"") == 2);
    CHECK_FALSE(contains(loss, "train loss (step)"));  // no legend for a series with no point
    CHECK(count(chart_svg(page, "chart-accuracy"), "<circle class=\"marker\"") == 1);
    CHECK(contains(page, "<p class=\"no-data\" id=\"chart-phases\">"));
    CHECK_FALSE(contains(page, "nan"));
  }

  TEST_CASE("non-finite losses are left out and counted") {
    RunReport report = make_report(2, 10);
    report.steps[3].loss = std::numeric_limits<double>::quiet_NaN();
    report.steps[7].loss = std::numeric_limits<double>::infinity();
    const std::string loss = chart_svg(written(report), "chart-loss");
    CHECK(contains(loss, "2 non-finite values (nan, inf) not drawn"));
    const size_t points = loss.find("points=\"");
    const std::string step_points = loss.substr(points, loss.find('"', points + 8) - points);
    CHECK(count(step_points, ",") == 8);
    CHECK_FALSE(contains(step_points, "nan"));
    CHECK_FALSE(contains(step_points, "inf"));
  }

  TEST_CASE("a rank that computes longer than the others is marked as the straggler") {
    RunReport report = make_report(2, 5);
    report.ranks = {make_rank(0, 10, 8, 0), make_rank(1, 10, 8, 0), make_rank(2, 10, 8, 0),
                    make_rank(3, 17, 1, 0)};
    const std::string page = written(report);
    CHECK(count(page, "<tr class=\"straggler\">") == 1);
    CHECK(contains(page, "<tr class=\"straggler\"><td class=\"num\">3</td>"));
    CHECK(contains(page, "Straggler: rank 3 (node1) computes for 17 ms per step"));
    CHECK(contains(chart_svg(page, "chart-phases"), "font-weight=\"bold\"><title>"));

    report.ranks[3] = make_rank(3, 10.5, 7.5, 0);  // within 10% of the others
    const std::string even = written(report);
    CHECK_FALSE(contains(even, "straggler\">"));
    CHECK_FALSE(contains(even, "Straggler"));
  }

  TEST_CASE("graphed steps: launch and device in the chart, comm wait not measured, no straggler") {
    RunReport report = make_report(2, 5);
    report.ranks = {make_rank(0, 10, 8, 0), make_rank(1, 17, 1, 0)};
    report.ranks[1].phases[train::Phase::kLaunch] =
        0.1 * 2;  // 2 ms a step of launching and 4 of the device
    report.ranks[1].phases[train::Phase::kDevice] = 0.1 * 4;
    report.ranks[1].step_seconds_mean += 0.006;
    const std::string page = written(report);
    const std::string phases = chart_svg(page, "chart-phases");
    CHECK(count(phases, "<rect class=\"swatch\"") == 8);
    CHECK(contains(phases, "rank 1 launch: 2 ms"));
    CHECK(contains(phases, "rank 1 device: 4 ms"));
    CHECK(count(page, "<td class=\"num\">not measured</td>") == 2 * 2);  // compute, comm wait
    CHECK_FALSE(contains(page, "Straggler"));  // a graphed step waits inside its device time
  }

  TEST_CASE("an unwritable path is a UsageError naming it") {
    TempDir dir;
    const std::string path = dir.file("missing/report.html");
    const std::string message =
        error_message<UsageError>([&] { report::write_run_report(path, make_report(1, 1)); });
    INFO("message: ", message);
    CHECK(contains(message, "cannot write the run report '" + path + "'"));
  }
}

}  // namespace mnist_ddp::testing
