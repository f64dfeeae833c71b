"""One set of writers for every tabular report (the arena, health, diff): rows of dicts and the
columns to show, out as an aligned table, CSV, JSON or Markdown, plus a hand-written SVG bar chart.

Why one module: each report then says only *what* its columns are (`Column`), and a number reads
the same in every format: the table and Markdown round it by the column's `digits`, CSV and JSON
keep it whole (a script must not parse a rounded value). A missing value (None) is "" in CSV,
null in JSON and "–" where a person reads it. Strings that came from a model file (token text, a
file name) are escaped for the format they land in; the CLI's `emit` escapes control characters.
"""

import csv
import io
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tokworkbench.core.errors import ReportError

MISSING = "–"  # a value a row does not have, where a person reads it

Row = Mapping[str, object]


@dataclass(frozen=True)
class Column:
    key: str  # the row's key
    title: str = ""  # the header (default: the key)
    digits: int | None = None  # a float rounded to this many decimals in table and Markdown
    percent: bool = False  # a share (0..1), shown ×100 with a % sign in table and Markdown

    @property
    def header(self) -> str:
        return self.title or self.key

    def shown(self, value: object) -> str:
        """The value as a person reads it (table, Markdown)."""
        if value is None:
            return MISSING
        if isinstance(value, bool):
            return "yes" if value else "no"
        if isinstance(value, float):
            if not math.isfinite(value):
                return MISSING
            if self.percent:
                return f"{value * 100:.{2 if self.digits is None else self.digits}f}%"
            return f"{value:,.{self.digits}f}" if self.digits is not None else f"{value:,}"
        if isinstance(value, int):
            return f"{value:,}"
        return str(value)


def _numeric(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _raw(value: object) -> object:
    """The value as a script reads it: a float that is not finite has no number to give."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def _one_line(text: str) -> str:
    """A cell of an aligned table stays on its line: line ends and tabs as their escapes."""
    return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") \
        if any(c in text for c in "\n\r\t") else text


def to_table(rows: Sequence[Row], columns: Sequence[Column]) -> str:
    """Aligned plain text: numbers to the right, text to the left, a rule under the header."""
    cells = [[_one_line(c.shown(r.get(c.key))) for c in columns] for r in rows]
    widths = [max([len(c.header)] + [len(line[i]) for line in cells]) for i, c in enumerate(columns)]
    right = [any(_numeric(r.get(c.key)) for r in rows) for c in columns]

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if r else v.ljust(w) for v, w, r in zip(values, widths, right)).rstrip()

    return "\n".join([line([c.header for c in columns]), line(["-" * w for w in widths])]
                     + [line(values) for values in cells])


def _markdown_cell(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def to_markdown(rows: Sequence[Row], columns: Sequence[Column]) -> str:
    """A GitHub-flavoured Markdown table (numbers right-aligned)."""
    right = [any(_numeric(r.get(c.key)) for r in rows) for c in columns]
    head = "| " + " | ".join(_markdown_cell(c.header) for c in columns) + " |"
    rule = "| " + " | ".join("---:" if r else "---" for r in right) + " |"
    body = ["| " + " | ".join(_markdown_cell(c.shown(r.get(c.key))) for c in columns) + " |" for r in rows]
    return "\n".join([head, rule, *body])


def _csv_cell(value: object) -> object:
    """Unrounded; a text cell a spreadsheet would run as a formula gets a leading quote (OWASP)."""
    value = _raw(value)
    if value is None:
        return ""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def to_csv(rows: Sequence[Row], columns: Sequence[Column]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([c.key for c in columns])
    for r in rows:
        writer.writerow([_csv_cell(r.get(c.key)) for c in columns])
    return out.getvalue().rstrip("\n")


def to_json(rows: Sequence[Row], columns: Sequence[Column], extra: Mapping[str, object] | None = None) -> str:
    """A list of objects keyed by the columns' keys, or, with `extra`, an object holding it
    under "rows" beside the extra fields (a report's totals, its reference)."""
    listed = [{c.key: _raw(r.get(c.key)) for c in columns} for r in rows]
    doc: object = listed if extra is None else {**extra, "rows": listed}
    return json.dumps(doc, ensure_ascii=False, indent=1, allow_nan=False)


FORMATS: dict[str, Callable[[Sequence[Row], Sequence[Column]], str]] = {
    "table": to_table, "csv": to_csv, "json": to_json, "markdown": to_markdown}


def render(fmt: str, rows: Sequence[Row], columns: Sequence[Column]) -> str:
    if fmt not in FORMATS:
        raise ReportError(f"unknown report format {fmt!r}; the formats are {', '.join(FORMATS)}")
    return FORMATS[fmt](rows, columns)


# -- SVG ----------------------------------------------------------------------------------------
PALETTE = ("#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2", "#edc948", "#b07aa1", "#ff9da7", "#9c755f",
           "#bab0ac")
_BAR, _GAP, _LABEL_W, _PLOT_W, _CHAR_W = 12, 8, 220, 420, 7


def _xml(text: str) -> str:
    """Text safe inside an SVG element or attribute: XML 1.0 allows no C0 control but tab and
    line ends, no lone surrogate, no U+FFFE/U+FFFF; each becomes U+FFFD."""
    clean = "".join(ch if (ch in "\t\n" or " " <= ch) and not ("\ud800" <= ch <= "\udfff")
                    and ch not in "\ufffe\uffff" else "\ufffd" for ch in text)
    return clean.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def _clip(text: str, chars: int) -> str:
    return text if len(text) <= chars else text[: chars - 1] + "…"


def bar_chart_svg(title: str, groups: Sequence[str], series: Sequence[str],
                  values: Mapping[tuple[str, str], float | None], unit: str = "") -> str:
    """Horizontal grouped bars: one group per `groups` entry (a text), one bar per `series`
    entry (a tokenizer) in each, `values[(group, series)]` long (None: no bar, "–" shown). A
    legend names the series. A few lines of SVG 1.1 that any browser shows; no script, no
    external reference."""
    finite = [v for v in values.values() if v is not None and math.isfinite(v)]
    top = max((abs(v) for v in finite), default=0.0) or 1.0
    group_h = len(series) * _BAR + _GAP
    legend_h = 18 * len(series)
    head = 30
    height = head + legend_h + len(groups) * group_h + 20
    width = _LABEL_W + _PLOT_W + 90
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'),
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="18" font-size="14" font-weight="bold">{_xml(title)}</text>']
    for k, name in enumerate(series):
        y = head + 18 * k
        out.append(f'<rect x="10" y="{y}" width="12" height="12" fill="{PALETTE[k % len(PALETTE)]}"/>')
        out.append(f'<text x="28" y="{y + 10}">{_xml(_clip(name, 90))}</text>')
    y0 = head + legend_h + 10
    for g, group in enumerate(groups):
        gy = y0 + g * group_h
        out.append(f'<text x="{_LABEL_W - 6}" y="{gy + len(series) * _BAR / 2 + 4:.1f}" text-anchor="end">'
                   f'{_xml(_clip(group, _LABEL_W // _CHAR_W))}</text>')
        for k, name in enumerate(series):
            value = values.get((group, name))
            y = gy + k * _BAR
            if value is None or not math.isfinite(value):
                out.append(f'<text x="{_LABEL_W + 2}" y="{y + 10}" fill="#888">{MISSING}</text>')
                continue
            w = max(0.0, value / top * _PLOT_W)
            out.append(f'<rect x="{_LABEL_W}" y="{y}" width="{w:.1f}" height="{_BAR - 2}" '
                       f'fill="{PALETTE[k % len(PALETTE)]}"><title>{_xml(name)}: {value:.3f}</title></rect>')
            out.append(f'<text x="{_LABEL_W + w + 4:.1f}" y="{y + 9}" font-size="9">{value:.2f}{_xml(unit)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def line_chart_svg(title: str, points: Sequence[tuple[float, float]], x_label: str, y_label: str) -> str:
    """One line through `points` (x ascending), with the axes' ranges written at their ends:
    the compression curve (tokens after each merge), where the shape says more than a table."""
    width, height, left, bottom, top_pad = 640, 360, 80, 40, 36
    plot_w, plot_h = width - left - 20, height - bottom - top_pad
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
            f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">'),
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="10" y="18" font-size="14" font-weight="bold">{_xml(title)}</text>']
    finite = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y)]
    x0, y_axis = left, top_pad + plot_h
    out.append(f'<line x1="{x0}" y1="{top_pad}" x2="{x0}" y2="{y_axis}" stroke="#444"/>')
    out.append(f'<line x1="{x0}" y1="{y_axis}" x2="{x0 + plot_w}" y2="{y_axis}" stroke="#444"/>')
    out.append(f'<text x="{x0 + plot_w / 2:.0f}" y="{height - 6}" text-anchor="middle">{_xml(x_label)}</text>')
    out.append(f'<text x="14" y="{top_pad + plot_h / 2:.0f}" transform="rotate(-90 14 {top_pad + plot_h / 2:.0f})" '
               f'text-anchor="middle">{_xml(y_label)}</text>')
    if finite:
        xs, ys = [x for x, _ in finite], [y for _, y in finite]
        lo_x, hi_x, lo_y, hi_y = min(xs), max(xs), min(ys), max(ys)
        span_x, span_y = (hi_x - lo_x) or 1.0, (hi_y - lo_y) or 1.0
        path = " ".join(f"{x0 + (x - lo_x) / span_x * plot_w:.1f},{y_axis - (y - lo_y) / span_y * plot_h:.1f}"
                        for x, y in finite)
        out.append(f'<polyline points="{path}" fill="none" stroke="{PALETTE[0]}" stroke-width="2"/>')
        for value, y in ((hi_y, top_pad + 4), (lo_y, y_axis)):
            shown = f"{value:,.0f}" if abs(value) >= 100 else f"{value:.3g}"
            out.append(f'<text x="{x0 - 4}" y="{y:.0f}" text-anchor="end">{shown}</text>')
        for value, anchor, x in ((lo_x, "start", x0), (hi_x, "end", x0 + plot_w)):
            out.append(f'<text x="{x}" y="{y_axis + 14}" text-anchor="{anchor}">{value:,.0f}</text>')
    else:
        out.append(f'<text x="{x0 + 10}" y="{top_pad + 20}" fill="#888">no points</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"
