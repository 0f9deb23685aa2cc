// tests/unit/test_svg_chart.cpp — the pieces of the report's charts: HTML escaping, round axis
// ticks, tick and value labels, and charts that fall back to a note when there is nothing to draw.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "report/svg_chart.hpp"
#include "support/idx_writer.hpp"

namespace mnist_ddp::testing {
namespace {

using report::format_number;
using report::format_tick;
using report::html_escape;
using report::nice_ticks;

}  // namespace

TEST_SUITE("svg_chart") {
  TEST_CASE("html_escape replaces the five special characters and nothing else") {
    CHECK(html_escape("<a href=\"x\">Tom's & Jerry's</a>") ==
          "&lt;a href=&quot;x&quot;&gt;Tom&#39;s &amp; Jerry&#39;s&lt;/a&gt;");
    CHECK(html_escape("plain text, ümlauts, /path/to/data") ==
          "plain text, ümlauts, /path/to/data");
    CHECK(html_escape("") == "");
    CHECK(html_escape("&amp;") == "&amp;amp;");  // escaping twice shows, it does not undo
  }

  TEST_CASE("nice_ticks covers the range with round steps") {
    const auto loss = nice_ticks(0, 2.31, 5);
    CHECK(loss.step == doctest::Approx(0.5));
    CHECK(loss.low == 0);
    CHECK(loss.high == doctest::Approx(2.5));
    CHECK(loss.values.size() == 6);

    const auto accuracy = nice_ticks(96.41, 98.38, 5);
    CHECK(accuracy.step == doctest::Approx(0.5));
    CHECK(accuracy.low == doctest::Approx(96.0));
    CHECK(accuracy.high == doctest::Approx(98.5));

    const auto steps = nice_ticks(1, 705, 6, /*integer=*/true);
    CHECK(steps.step == 100);
    CHECK(steps.low == 0);
    CHECK(steps.high == 800);

    // No tick below the data from 0.3 / 0.1 = 2.9999999999999996.
    CHECK(nice_ticks(0.3, 0.7, 4).low == doctest::Approx(0.3));
  }

  TEST_CASE("nice_ticks widens a single value and keeps integer axes whole") {
    const auto zero = nice_ticks(0, 0, 5);
    CHECK(zero.low == 0);
    CHECK(zero.high == 1);

    const auto one_epoch = nice_ticks(1, 1, 6, /*integer=*/true);
    CHECK(one_epoch.step == 1);
    CHECK(one_epoch.low == 0);
    CHECK(one_epoch.high == 2);

    const auto value = nice_ticks(50, 50, 5);
    CHECK(value.low < 50);
    CHECK(value.high > 50);

    const auto nan = nice_ticks(std::nan(""), 1, 5);
    CHECK(nan.low == 0);
    CHECK(nan.high == 1);

    const double huge = std::numeric_limits<double>::max();
    const auto widest = nice_ticks(-huge, huge, 5);  // the range itself overflows
    CHECK(widest.values == std::vector<double>{-huge, huge});
  }

  TEST_CASE("tick labels have the decimals their step needs") {
    CHECK(format_tick(1.5, 0.5) == "1.5");
    CHECK(format_tick(2, 0.5) == "2.0");
    CHECK(format_tick(0.05, 0.05) == "0.05");
    CHECK(format_tick(300, 100) == "300");
    CHECK(format_tick(12000, 2000) == "12k");
    CHECK(format_tick(2500, 500) == "2500");
    CHECK(format_tick(-1e-17, 0.1) == "0");  // rounding noise, not "-0.0"
    CHECK(format_tick(1.5, std::numeric_limits<double>::infinity()) == "1.5");
  }

  TEST_CASE("format_number: three significant digits, whole numbers from 1000") {
    CHECK(format_number(0.012345) == "0.0123");
    CHECK(format_number(29.34) == "29.3");
    CHECK(format_number(12345.6) == "12346");
    CHECK(format_number(std::nan("")) == "nan");
    CHECK(format_number(-std::numeric_limits<double>::infinity()) == "-inf");
  }

  TEST_CASE("a line chart without a finite point is a note, with the chart's id") {
    report::LineChart chart;
    chart.id = "chart-x";
    chart.no_data_note = "nothing <here>";
    CHECK(report::line_chart_html(chart) ==
          "<p class=\"no-data\" id=\"chart-x\">No data: nothing &lt;here&gt;</p>\n");
    chart.series.push_back({"loss", "#000", {{1, std::nan("")}, {std::nan(""), 2}}});
    CHECK(contains(report::line_chart_html(chart), "class=\"no-data\""));
    chart.series[0].points.emplace_back(3, 4);
    const std::string svg = report::line_chart_html(chart);
    CHECK(svg.rfind("<svg id=\"chart-x\"", 0) == 0);
    CHECK(contains(svg, "<circle class=\"marker\""));  // one point: a dot, not an empty line
    CHECK(contains(svg, "2 non-finite values (nan, inf) not drawn"));
  }

  TEST_CASE("a percentage axis stops at its maximum") {
    report::LineChart chart;
    chart.id = "chart-accuracy";
    chart.y_max = 100;
    // One epoch at 97%: widened to 87.3..106.7, which round ticks would take to 110.
    chart.series.push_back({"accuracy", "#000", {{1, 97.0}}});
    const std::string svg = report::line_chart_html(chart);
    CHECK(contains(svg, ">85</text>"));
    CHECK(contains(svg, ">100</text>"));
    CHECK_FALSE(contains(svg, ">105</text>"));
    CHECK_FALSE(contains(svg, ">110</text>"));
  }

  TEST_CASE("stacked bars draw positive values only, and a note when there are none") {
    report::StackedBarChart chart;
    chart.id = "chart-phases";
    chart.unit = " ms";
    chart.segments = {{"a", "#111"}, {"b", "#222"}, {"c", "#333"}};
    chart.no_data_note = "no timings";
    chart.bars = {{"rank 0", "host", {0, 0, 0}, false}};
    CHECK(contains(report::stacked_bar_chart_html(chart), "class=\"no-data\""));

    chart.bars = {{"rank 0", "host0", {1, 0, 2}, false},
                  {"rank 1", "host1", {1, std::nan(""), -1}, true}};
    const std::string svg = report::stacked_bar_chart_html(chart);
    CHECK(contains(svg, "<svg id=\"chart-phases\""));
    size_t segments = 0;
    for (size_t at = svg.find("class=\"segment\""); at != std::string::npos;
         at = svg.find("class=\"segment\"", at + 1)) {
      ++segments;
    }
    CHECK(segments == 3);
    CHECK(contains(svg, "rank 0 c: 2 ms"));
    CHECK(contains(svg, ">3 ms</text>"));
    CHECK(contains(svg, "<title>host1</title>rank 1"));
  }
}

}  // namespace mnist_ddp::testing
