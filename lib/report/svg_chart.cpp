// lib/report/svg_chart.cpp — charts as SVG text in fixed viewBoxes; run-provided strings escaped.
#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "common/log.hpp"

namespace mnist_ddp::report {
namespace {

// Line charts: two side by side fill a 1200-pixel page; margins for ticks, labels and legend.
constexpr double kLineWidth = 560, kLineHeight = 300;
constexpr double kLeft = 62, kRight = 18, kTop = 34, kBottom = 46;

// Stacked bars: as wide as a line chart, so both scale alike in the grid; one row per bar.
constexpr double kBarWidth = kLineWidth, kBarRow = 32, kBarThickness = 20, kBarRight = 64;
// Tick labels and legend text are 11 px; a character is about 6.5 px wide.
constexpr double kCharWidth = 6.5;

constexpr const char* kGridColor = "#e3e3e3";
constexpr const char* kAxisColor = "#555";

/// An SVG coordinate: one decimal is finer than a pixel.
std::string coord(double value) { return string_printf("%.1f", value); }

std::string no_data(const std::string& id, const std::string& note) {
  return "<p class=\"no-data\" id=\"" + html_escape(id) + "\">No data: " + html_escape(note) +
         "</p>\n";
}

std::string svg_open(const std::string& id, double width, double height) {
  return "<svg id=\"" + html_escape(id) + "\" class=\"chart\" viewBox=\"0 0 " + coord(width) + " " +
         coord(height) + "\" width=\"" + coord(width) + "\" height=\"" + coord(height) +
         "\" font-family=\"system-ui, sans-serif\" font-size=\"11\" role=\"img\">\n";
}

/// A text element; `anchor` is start, middle or end. dy centres it on y in every viewer.
std::string text(double x, double y, const std::string& anchor, const std::string& content,
                 const std::string& extra = "") {
  return "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\" dy=\"0.35em\" text-anchor=\"" +
         anchor + "\"" + extra + ">" + html_escape(content) + "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const std::string& color,
                 const std::string& extra = "") {
  return "<line x1=\"" + coord(x1) + "\" y1=\"" + coord(y1) + "\" x2=\"" + coord(x2) + "\" y2=\"" +
         coord(y2) + "\" stroke=\"" + html_escape(color) + "\"" + extra + "/>\n";
}

/// Maps a data interval onto a pixel interval; `to` may run backwards (the y axis grows upwards).
struct Scale {
  double from_low, from_high, to_low, to_high;
  double operator()(double value) const {
    return to_low + (value - from_low) / (from_high - from_low) * (to_high - to_low);
  }
};

/// The grid, ticks, axes and axis labels of a line chart.
void draw_line_axes(std::ostringstream& svg, const LineChart& chart, const Ticks& x_ticks,
                    const Ticks& y_ticks, const Scale& sx, const Scale& sy) {
  const double bottom = kLineHeight - kBottom, right = kLineWidth - kRight;
  svg << "<g class=\"axes\">\n";
  for (const double y : y_ticks.values) {
    svg << line(kLeft, sy(y), right, sy(y), kGridColor);
    svg << text(kLeft - 6, sy(y), "end", format_tick(y, y_ticks.step));
  }
  for (const double x : x_ticks.values) {
    svg << line(sx(x), bottom, sx(x), bottom + 4, kAxisColor);
    svg << text(sx(x), bottom + 14, "middle", format_tick(x, x_ticks.step));
  }
  svg << line(kLeft, bottom, right, bottom, kAxisColor)
      << line(kLeft, kTop, kLeft, bottom, kAxisColor);
  svg << text((kLeft + right) / 2, kLineHeight - 10, "middle", chart.x_label);
  const double y_middle = (kTop + bottom) / 2;
  svg << text(14, y_middle, "middle", chart.y_label,
              " transform=\"rotate(-90 14 " + coord(y_middle) + ")\"");
  svg << "</g>\n";
}

/// One series of a line chart (its finite `points`), with its entry in the legend at `legend_x`.
void draw_line_series(std::ostringstream& svg, const LineChart& chart, const LineSeries& series,
                      const std::vector<std::pair<double, double>>& points, const Scale& sx,
                      const Scale& sy, double legend_x) {
  const std::string color = html_escape(series.color);
  const std::string name = html_escape(series.name);
  const std::string stroke =
      series.faint ? "\" stroke-width=\"1.2\" stroke-opacity=\"0.6\"" : "\" stroke-width=\"2\"";
  svg << "<polyline class=\"series\" fill=\"none\" stroke=\"" << color << stroke
      << " stroke-linejoin=\"round\" points=\"";
  for (size_t i = 0; i < points.size(); ++i) {
    svg << (i ? " " : "") << coord(sx(points[i].first)) << ',' << coord(sy(points[i].second));
  }
  svg << "\"><title>" << name << "</title></polyline>\n";
  // A polyline of one point draws nothing, so a lone point gets a dot in any series.
  const bool markers = series.markers || points.size() == 1;
  if (markers) {
    for (const auto& [x, y] : points) {
      svg << "<circle class=\"marker\" cx=\"" << coord(sx(x)) << "\" cy=\"" << coord(sy(y))
          << "\" r=\"3.5\" fill=\"" << color << "\"><title>" << name << ": "
          << html_escape(chart.x_label) << ' ' << format_number(x) << ", " << format_number(y)
          << "</title></circle>\n";
    }
  }

  const double legend_y = 14;
  svg << "<g class=\"legend\">\n"
      << line(
             legend_x, legend_y, legend_x + 22, legend_y, series.color,
             series.faint ? " stroke-width=\"1.5\" stroke-opacity=\"0.6\"" : " stroke-width=\"2\"");
  if (markers) {
    svg << "<circle cx=\"" << coord(legend_x + 11) << "\" cy=\"" << coord(legend_y)
        << "\" r=\"3.5\" fill=\"" << color << "\"/>\n";
  }
  svg << text(legend_x + 28, legend_y, "start", series.name) << "</g>\n";
}

}  // namespace

std::string html_escape(std::string_view text) {
  std::string escaped;
  escaped.reserve(text.size());
  for (const char c : text) {
    const char* entity = c == '&'    ? "&amp;"
                         : c == '<'  ? "&lt;"
                         : c == '>'  ? "&gt;"
                         : c == '"'  ? "&quot;"
                         : c == '\'' ? "&#39;"
                                     : nullptr;
    escaped += entity ? std::string_view(entity) : std::string_view(&c, 1);
  }
  return escaped;
}

std::string format_number(double value) {
  if (!std::isfinite(value)) return std::isnan(value) ? "nan" : (value > 0 ? "inf" : "-inf");
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, std::abs(value) >= 1000 ? "%.0f" : "%.3g", value);
  return buffer;
}

Ticks nice_ticks(double low, double high, int target, bool integer) {
  if (!std::isfinite(low) || !std::isfinite(high)) low = 0, high = 1;
  if (low > high) std::swap(low, high);
  if (low == high) {
    // One value: in the middle of a small range, or at the bottom for 0 (no negative axis).
    if (low == 0) {
      high = 1;
    } else {
      const double delta = integer ? 1.0 : std::abs(low) * 0.1;
      low -= delta;
      high += delta;
    }
  }
  const double raw = (high - low) / std::max(target, 1);
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / magnitude;
  double step = (fraction < 1.5 ? 1 : fraction < 3 ? 2 : fraction < 7 ? 5 : 10) * magnitude;
  if (integer) step = std::max(step, 1.0);
  if (!std::isfinite(step) || step <= 0) {
    // A range wider than the largest double: no round ticks, just the ends.
    return Ticks{low, high, high - low, {low, high}};
  }

  Ticks ticks;
  ticks.step = step;
  // The epsilon keeps 0.3 / 0.1 = 2.9999999999999996 from adding a tick below the data.
  ticks.low = std::floor(low / step + 1e-9) * step;
  ticks.high = std::ceil(high / step - 1e-9) * step;
  const long count = std::lround((ticks.high - ticks.low) / step);
  for (long i = 0; i <= count; ++i)
    ticks.values.push_back(ticks.low + static_cast<double>(i) * step);
  return ticks;
}

std::string format_tick(double value, double step) {
  if (!std::isfinite(step) || step <= 0) return format_number(value);
  std::string suffix;
  if (step >= 1000) {
    value /= 1000;
    step /= 1000;
    suffix = "k";
  }
  if (std::abs(value) < step * 1e-6) value = 0;  // no "-0.0" from rounding
  const int decimals = std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
  return value == 0 ? "0" : string_printf("%.*f", decimals, value) + suffix;
}

std::string line_chart_html(const LineChart& chart) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  double x_low = inf, x_high = -inf, y_low = inf, y_high = -inf;
  std::vector<std::vector<std::pair<double, double>>> finite(chart.series.size());
  size_t dropped = 0;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    for (const auto& [x, y] : chart.series[s].points) {
      // A diverged run logs nan losses; a nan in `points` would make the browser drop the line.
      if (!std::isfinite(x) || !std::isfinite(y)) {
        ++dropped;
        continue;
      }
      finite[s].emplace_back(x, y);
      x_low = std::min(x_low, x), x_high = std::max(x_high, x);
      y_low = std::min(y_low, y), y_high = std::max(y_high, y);
    }
  }
  if (x_low == inf) return no_data(chart.id, chart.no_data_note);

  if (chart.y_from_zero) y_low = std::min(y_low, 0.0);
  const Ticks x_ticks = nice_ticks(x_low, x_high, 6, chart.x_integer);
  Ticks y_ticks = nice_ticks(y_low, y_high, 5);
  if (chart.y_max && y_high <= *chart.y_max && y_ticks.high > *chart.y_max) {
    // A single 97% is widened to 87..107, which round ticks take to 110; a percentage ends at 100.
    y_ticks.high = *chart.y_max;
    while (!y_ticks.values.empty() && y_ticks.values.back() > y_ticks.high + 1e-9 * y_ticks.step)
      y_ticks.values.pop_back();
  }

  const double bottom = kLineHeight - kBottom, right = kLineWidth - kRight;
  const Scale sx{x_ticks.low, x_ticks.high, kLeft, right};
  const Scale sy{y_ticks.low, y_ticks.high, bottom, kTop};

  std::ostringstream svg;
  svg << svg_open(chart.id, kLineWidth, kLineHeight);
  draw_line_axes(svg, chart, x_ticks, y_ticks, sx, sy);
  double legend_x = kLeft;
  for (size_t s = 0; s < chart.series.size(); ++s) {
    if (finite[s].empty()) continue;
    draw_line_series(svg, chart, chart.series[s], finite[s], sx, sy, legend_x);
    legend_x += 28 + kCharWidth * static_cast<double>(chart.series[s].name.size()) + 18;
  }
  if (dropped > 0) {
    svg << text(right, kTop + 10, "end",
                std::to_string(dropped) + " non-finite value" + (dropped == 1 ? "" : "s") +
                    " (nan, inf) not drawn",
                " class=\"dropped\" fill=\"#b00\"");
  }
  svg << "</svg>\n";
  return svg.str();
}

std::string stacked_bar_chart_html(const StackedBarChart& chart) {
  double largest = 0;
  size_t longest_label = 0;
  for (const StackedBar& bar : chart.bars) {
    double total = 0;
    for (const double value : bar.values) total += value > 0 ? value : 0;
    largest = std::max(largest, total);
    longest_label = std::max(longest_label, bar.label.size());
  }
  if (!(largest > 0) || !std::isfinite(largest)) return no_data(chart.id, chart.no_data_note);

  const double left = std::max(70.0, kCharWidth * static_cast<double>(longest_label) + 16);
  const double right = kBarWidth - kBarRight;
  const double bottom = kTop + kBarRow * static_cast<double>(chart.bars.size());
  const double height = bottom + kBottom;
  const Ticks ticks = nice_ticks(0, largest, 8);
  const Scale sx{0, ticks.high, left, right};

  std::ostringstream svg;
  svg << svg_open(chart.id, kBarWidth, height);
  svg << "<g class=\"axes\">\n";
  for (const double x : ticks.values) {
    svg << line(sx(x), kTop, sx(x), bottom, kGridColor);
    svg << text(sx(x), bottom + 14, "middle", format_tick(x, ticks.step));
  }
  svg << line(left, bottom, right, bottom, kAxisColor);
  svg << text((left + right) / 2, height - 10, "middle", chart.x_label) << "</g>\n";

  for (size_t b = 0; b < chart.bars.size(); ++b) {
    const StackedBar& bar = chart.bars[b];
    const double top = kTop + kBarRow * static_cast<double>(b) + (kBarRow - kBarThickness) / 2;
    const double middle = top + kBarThickness / 2;
    const std::string weight = bar.highlight ? " font-weight=\"bold\"" : "";
    svg << "<text x=\"" << coord(left - 8) << "\" y=\"" << coord(middle)
        << "\" dy=\"0.35em\" text-anchor=\"end\"" << weight << "><title>"
        << html_escape(bar.tooltip) << "</title>" << html_escape(bar.label) << "</text>\n";
    double x = 0, total = 0;
    for (size_t s = 0; s < bar.values.size() && s < chart.segments.size(); ++s) {
      const double value = bar.values[s];
      if (!(value > 0) || !std::isfinite(value)) continue;
      svg << "<rect class=\"segment\" x=\"" << coord(sx(x)) << "\" y=\"" << coord(top)
          << "\" width=\"" << coord(sx(x + value) - sx(x)) << "\" height=\"" << coord(kBarThickness)
          << "\" fill=\"" << html_escape(chart.segments[s].second) << "\"><title>"
          << html_escape(bar.label) << ' ' << html_escape(chart.segments[s].first) << ": "
          << format_number(value) << html_escape(chart.unit) << "</title></rect>\n";
      x += value;
      total += value;
    }
    svg << text(sx(x) + 6, middle, "start", format_number(total) + chart.unit, weight);
  }

  double legend_x = left;
  for (const auto& [name, color] : chart.segments) {
    svg << "<g class=\"legend\"><rect class=\"swatch\" x=\"" << coord(legend_x)
        << "\" y=\"8\" width=\"12\" height=\"12\" fill=\"" << html_escape(color) << "\"/>\n"
        << text(legend_x + 17, 14, "start", name) << "</g>\n";
    legend_x += 17 + kCharWidth * static_cast<double>(name.size()) + 14;
  }
  svg << "</svg>\n";
  return svg.str();
}

}  // namespace mnist_ddp::report
