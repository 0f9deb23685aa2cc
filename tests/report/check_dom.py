#!/usr/bin/env python3
# tests/report/check_dom.py — provides: the DOM half of check_report.sh: reads the page as the
# browser built it (chromium --dump-dom) and checks that every chart draws something and that
# nothing refers outside the page.
#
#   check_dom.py [--allow-no-data] DOM.html CHART_ID...
#
# Exits 1 with one "FAIL:" line per problem; prints "ok:" lines otherwise.
import argparse
import html.parser
import re
import sys

EXTERNAL = re.compile(r"^\s*(https?:|ftp:|//)", re.IGNORECASE)
URL_IN_CSS = re.compile(r"url\(\s*['\"]?\s*(https?:|//)|@import", re.IGNORECASE)
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}


class Page(html.parser.HTMLParser):
    def __init__(self, chart_ids):
        super().__init__()
        self.chart_ids = set(chart_ids)
        self.stack = []          # open elements: (tag, chart id or None)
        self.charts = {}         # id -> {"tag": ..., "drawn": count}
        self.external = []
        self.title = ""
        self.in_title = False

    def chart(self):
        for _, chart_id in reversed(self.stack):
            if chart_id:
                return self.charts[chart_id]
        return None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name, value in attrs.items():
            if value and name in ("src", "href", "xlink:href", "action", "poster", "data",
                                  "srcset", "background") and EXTERNAL.search(value):
                self.external.append(f"<{tag} {name}=\"{value}\">")
            if value and name == "style" and URL_IN_CSS.search(value):
                self.external.append(f"<{tag} style=\"{value}\">")
        chart_id = attrs.get("id") if attrs.get("id") in self.chart_ids else None
        if chart_id:
            self.charts[chart_id] = {"tag": tag, "drawn": 0}
        chart = self.chart()
        if chart and chart["tag"] == "svg" and self.drawn(tag, attrs):
            chart["drawn"] += 1
        if tag == "title" and not self.stack_has("svg"):
            self.in_title = True
        if tag not in VOID:
            self.stack.append((tag, chart_id))

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID:
            self.stack.pop()

    def handle_endtag(self, tag):
        self.in_title = False
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                break

    def handle_data(self, data):
        if self.in_title:
            self.title += data
        # Only style sheets load from text; a config value that reads "https://..." is just text.
        if self.stack and self.stack[-1][0] == "style":
            for match in URL_IN_CSS.finditer(data):
                self.external.append("<style> " + data[match.start():match.start() + 60])

    def stack_has(self, tag):
        return any(t == tag for t, _ in self.stack)

    @staticmethod
    def drawn(tag, attrs):
        """A data mark that shows something: a line through points, a dot, a bar."""
        def number(name):
            try:
                return float(attrs.get(name, "0"))
            except ValueError:
                return 0.0
        if tag == "polyline":
            return len((attrs.get("points") or "").split()) >= 2
        if tag == "circle":
            return "marker" in (attrs.get("class") or "") and number("r") > 0
        if tag == "rect":
            return "segment" in (attrs.get("class") or "") and number("width") > 0
        return False


arguments = argparse.ArgumentParser(description="Checks the charts of a run report's DOM.")
arguments.add_argument("--allow-no-data", action="store_true",
                       help="a chart replaced by its 'no data' note passes")
arguments.add_argument("dom")
arguments.add_argument("chart_ids", nargs="+")
options = arguments.parse_args()
chart_ids, allow_no_data = options.chart_ids, options.allow_no_data

page = Page(chart_ids)
with open(options.dom, encoding="utf-8") as dom:
    page.feed(dom.read())
problems = []
if not page.title.strip():
    problems.append("the page has no <title>")
for chart_id in chart_ids:
    chart = page.charts.get(chart_id)
    if chart is None:
        problems.append(f"no element with id {chart_id}")
    elif chart["tag"] != "svg":
        if not allow_no_data:
            problems.append(f"{chart_id} is a '{chart['tag']}', not a chart: no data was drawn")
    elif chart["drawn"] == 0:
        problems.append(f"<svg id={chart_id}> draws no line, dot or bar")
    else:
        print(f"ok: {chart_id}: {chart['drawn']} drawn elements")
for reference in page.external:
    problems.append(f"refers outside the page: {reference}")
for problem in problems:
    print(f"FAIL: {problem}")
sys.exit(1 if problems else 0)
