// lib/report/svg_chart.hpp — provides: html_escape, format_number, nice_ticks, SVG charts.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace mnist_ddp::report {

/// `text` with & < > " ' replaced by entities, safe in HTML text and quoted attributes.
std::string html_escape(std::string_view text);

/// `value` with 3 significant digits, whole from 1000 up ("12345", not "1.23e+04").
std::string format_number(double value);

/// An axis range widened to whole multiples of a round step (1, 2 or 5 times a power of ten).
struct Ticks {
  double low = 0;
  double high = 1;
  double step = 1;
  std::vector<double> values;  // low, low + step, ..., high
};

/// About `target` round ticks covering [low, high] (widened when empty); steps >= 1 if `integer`.
Ticks nice_ticks(double low, double high, int target = 5, bool integer = false);

/// A tick label with as many decimals as `step` needs; 12000 with a step of 2000 is "12k".
std::string format_tick(double value, double step);

struct LineSeries {
  std::string name;                               // legend text
  std::string color;                              // CSS colour
  std::vector<std::pair<double, double>> points;  // (x, y); non-finite ones are left out
  bool markers = false;  // a dot on each point: for series with few points, one included
  bool faint = false;    // thin and translucent: a noisy per-step series under per-epoch ones
};

struct LineChart {
  std::string id;  // the <svg> id, e.g. "chart-loss"
  std::string x_label;
  std::string y_label;
  std::vector<LineSeries> series;
  bool x_integer = false;       // steps and epochs: no tick at 1.5
  bool y_from_zero = false;     // the y axis starts at 0 (losses, throughput)
  std::optional<double> y_max;  // the y axis never goes above this (100 for a percentage)
  std::string no_data_note;     // shown instead of the chart when no series has a point
};

/// An `<svg id=...>`: a <polyline class="series"> per series with a finite point, <circle
/// class="marker">s where asked or for lone points; else `<p class="no-data" id=...>`.
std::string line_chart_html(const LineChart& chart);

struct StackedBar {
  std::string label;           // left of the bar, e.g. "rank 3"
  std::string tooltip;         // on the label, e.g. the host
  std::vector<double> values;  // one per segment of the chart; non-positive ones are not drawn
  bool highlight = false;      // bold label, e.g. the slowest rank
};

struct StackedBarChart {
  std::string id;
  std::string x_label;
  std::string unit;                                           // after every value, e.g. " ms"
  std::vector<std::pair<std::string, std::string>> segments;  // (name, colour), in stack order
  std::vector<StackedBar> bars;                               // top to bottom
  std::string no_data_note;
};

/// An `<svg id=...>`: a row per bar, a <rect class="segment"> per positive value, totals and a
/// legend; `<p class="no-data" id=...>` when no bar has a positive value.
std::string stacked_bar_chart_html(const StackedBarChart& chart);

}  // namespace mnist_ddp::report
