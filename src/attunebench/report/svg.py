"""Inline SVG charts, drawn in Python: no script, no external request, text escaped.

Charts are `xml.etree.ElementTree` elements, so every label from the data is escaped by the
serialiser; they are returned as `Markup` for the templates to embed as is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from xml.etree import ElementTree as ET

from markupsafe import Markup

PALETTE = (
    "#1f77b4",
    "#d62728",
    "#2ca02c",
    "#9467bd",
    "#ff7f0e",
    "#17becf",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#393b79",
    "#637939",
)
FONT = "font-family:system-ui,sans-serif;font-size:12px"
NEUTRAL = "#444"  # dots that stand for no model (tasks, for one)
CHAR_WIDTH = 7.0  # a generous average advance at 12px, so labels are sized to fit, not clipped


def text_width(texts: Iterable[str], least: float) -> float:
    """Room for the longest of `texts` (at least `least`)."""
    return max([least, *(CHAR_WIDTH * len(t) + 12 for t in texts)])


@dataclass(frozen=True)
class Interval:
    label: str
    value: float | None
    low: float | None
    high: float | None
    note: str = ""
    colour: str = NEUTRAL


@dataclass(frozen=True)
class Mark:
    """A level drawn across a forest plot (the people's own ceiling, chance), with its interval
    as a band where it has one; its label is written above the rows."""

    label: str
    value: float
    low: float | None = None
    high: float | None = None
    colour: str = "#7a4fb0"
    dash: str = ""  # a stroke-dasharray, for a level drawn lighter (chance)


def _svg(width: float, height: float, title: str) -> ET.Element:
    root = ET.Element(
        "svg",
        {
            "xmlns": "http://www.w3.org/2000/svg",
            "width": f"{width:.0f}",
            "height": f"{height:.0f}",
            "viewBox": f"0 0 {width:.0f} {height:.0f}",
            "role": "img",
            "style": FONT,
        },
    )
    ET.SubElement(root, "title").text = title
    return root


def _text(parent: ET.Element, x: float, y: float, text: str, **attrs: str) -> None:
    ET.SubElement(parent, "text", {"x": f"{x:.1f}", "y": f"{y:.1f}", **attrs}).text = text


def _line(parent: ET.Element, x1: float, y1: float, x2: float, y2: float, **attrs: str) -> None:
    coords = {"x1": f"{x1:.1f}", "y1": f"{y1:.1f}", "x2": f"{x2:.1f}", "y2": f"{y2:.1f}"}
    ET.SubElement(parent, "line", {**coords, "stroke": "#333", **attrs})


def _circle(parent: ET.Element, cx: float, cy: float, r: str, fill: str) -> None:
    ET.SubElement(parent, "circle", {"cx": f"{cx:.1f}", "cy": f"{cy:.1f}", "r": r, "fill": fill})


def _key(parent: ET.Element, x: float, k: int, colour: str, label: str) -> None:
    """The k-th entry of a chart's legend: a swatch at `x` and its label."""
    key = ET.SubElement(parent, "g", {"class": "key"})
    swatch = {"x": f"{x:.1f}", "y": f"{14 + 16 * k:.1f}", "width": "10", "height": "10"}
    ET.SubElement(key, "rect", {**swatch, "fill": colour})
    _text(key, x + 16, 23 + 16 * k, label)


def _markup(root: ET.Element) -> Markup:
    return Markup(ET.tostring(root, encoding="unicode"))  # escaped by ElementTree


def domain(values: Sequence[float | None], unit: bool = True) -> tuple[float, float]:
    """The x range: [0, 1] when everything lies in it (scores), else the data padded."""
    present = [v for v in values if v is not None]
    if not present:
        return 0.0, 1.0
    low, high = min(present), max(present)
    if unit and low >= 0.0 and high <= 1.0:
        return 0.0, 1.0
    pad = (high - low) * 0.05 or 0.05
    return low - pad, high + pad


def forest(
    rows: Sequence[Interval], title: str, zero: bool = False, marks: Sequence[Mark] = ()
) -> Markup:
    """A dot per row with its interval as a whisker, and `marks` drawn across the rows."""
    plot, row_height = 380.0, 22.0
    label_width = text_width((r.label for r in rows), 120.0)
    shown = [(r.note or "no value") if r.value is None else f"{r.value:.3f}{r.note}" for r in rows]
    top = 20.0 + 16.0 * len(marks)  # room above the rows for each mark's label
    height = top + 20 + row_height * len(rows)
    root = _svg(label_width + plot + text_width(shown, 60.0), height, title)
    values = [v for r in rows for v in (r.low, r.high, r.value)]
    values += [v for m in marks for v in (m.low, m.high, m.value)]
    lo, hi = domain([*values, 0.0] if zero else values, unit=not zero)
    if zero:
        edge = max(abs(lo), abs(hi))
        lo, hi = -edge, edge

    def x(value: float) -> float:
        return label_width + (value - lo) / (hi - lo) * plot

    axis_y = height - 20
    _line(root, x(lo), axis_y, x(hi), axis_y)
    for tick in (lo, (lo + hi) / 2, hi):
        _text(root, x(tick), axis_y + 14, f"{tick:.2f}", **{"text-anchor": "middle"})
    if zero:
        _line(root, x(0), 10, x(0), axis_y, **{"stroke-dasharray": "3,3", "stroke": "#999"})
    for k, mark in enumerate(marks):
        _mark(root, mark, x, top - 8, axis_y, 14 + 16 * k)
    for i, (row, text) in enumerate(zip(rows, shown, strict=True)):
        y = top + i * row_height
        _text(root, label_width - 8, y + 4, row.label, **{"text-anchor": "end"})
        if row.value is None:
            _text(root, x(lo) + 4, y + 4, text, fill="#888")
            continue
        if row.low is not None and row.high is not None:
            _line(root, x(row.low), y, x(row.high), y, **{"stroke-width": "2"})
        _circle(root, x(row.value), y, "4", row.colour)
        _text(root, label_width + plot + 8, y + 4, text)
    return _markup(root)


def _mark(
    root: ET.Element, mark: Mark, x: Callable[[float], float], top: float, bottom: float, at: float
) -> None:
    """A mark's band (its interval), its line from `top` to `bottom`, its label at height `at`."""
    if mark.low is not None and mark.high is not None:
        band = {"x": f"{x(mark.low):.1f}", "y": f"{top:.1f}", "height": f"{bottom - top:.1f}"}
        band["width"] = f"{max(x(mark.high) - x(mark.low), 1.0):.1f}"
        ET.SubElement(root, "rect", {**band, "fill": mark.colour, "fill-opacity": "0.12"})
    style = {"stroke": mark.colour, **({"stroke-dasharray": mark.dash} if mark.dash else {})}
    _line(root, x(mark.value), top, x(mark.value), bottom, **style)
    _text(root, x(mark.value) + 3, at, mark.label, fill=mark.colour)


def diverging(value: float) -> str:
    """-1 blue, 0 white, +1 red."""
    v = max(-1.0, min(1.0, value))
    if v >= 0:
        r, g, b = 255, int(255 - 150 * v), int(255 - 170 * v)
    else:
        r, g, b = int(255 + 170 * v), int(255 + 110 * v), 255
    return f"rgb({r},{g},{b})"


def sequential(value: float) -> str:
    """0 white to 1 dark green."""
    v = max(0.0, min(1.0, value))
    return f"rgb({int(255 - 200 * v)},{int(255 - 110 * v)},{int(255 - 180 * v)})"


Cell = tuple[float | None, str]  # the value that colours it, the text it shows


def heatmap(
    rows: Sequence[str],
    columns: Sequence[str],
    cells: Sequence[Sequence[Cell]],
    title: str,
    colour: str = "diverging",
) -> Markup:
    """A table of coloured cells, each (value for the colour, text to show)."""
    cell_w, cell_h = 120.0, 34.0
    label_width = text_width(rows, 120.0)
    width = label_width + cell_w * len(columns) + 10
    height = 60 + cell_h * len(rows)
    root = _svg(width, height, title)
    paint = diverging if colour == "diverging" else sequential
    for j, name in enumerate(columns):
        _text(root, label_width + (j + 0.5) * cell_w, 40, name, **{"text-anchor": "middle"})
    for i, name in enumerate(rows):
        y = 50 + i * cell_h
        _text(root, label_width - 8, y + cell_h / 2 + 4, name, **{"text-anchor": "end"})
        for j, (value, shown) in enumerate(cells[i]):
            box = {"x": f"{label_width + j * cell_w:.1f}", "y": f"{y:.1f}"}
            box |= {"width": f"{cell_w - 2:.1f}", "height": f"{cell_h - 2:.1f}"}
            ET.SubElement(root, "rect", {**box, "fill": "#eee" if value is None else paint(value)})
            centre = {"text-anchor": "middle", "font-size": "11px"}
            _text(root, label_width + (j + 0.5) * cell_w, y + cell_h / 2 + 4, shown, **centre)
    return _markup(root)


def colours(names: Iterable[str]) -> dict[str, str]:
    """One colour per name, by sorted order: the same name gets the same colour in every chart."""
    return {name: PALETTE[k % len(PALETTE)] for k, name in enumerate(sorted(set(names)))}


@dataclass(frozen=True)
class Line:
    label: str
    colour: str
    points: Sequence[Interval]


def series(categories: Sequence[str], lines: Sequence[Line], title: str) -> Markup:
    """One line per series across categories (e.g. early, middle, late), with intervals."""
    left, plot_w, plot_h = 50.0, 320.0, 200.0
    legend = text_width((line.label for line in lines), 120.0) + 30
    root = _svg(left + plot_w + legend, max(plot_h + 60, 30 + 16 * len(lines)), title)
    values = [v for line in lines for p in line.points for v in (p.low, p.high, p.value)]
    lo, hi = domain(values)

    def y(value: float) -> float:
        return 20 + (hi - value) / (hi - lo) * plot_h

    def x(index: int) -> float:
        return left + (index + 0.5) * plot_w / max(len(categories), 1)

    _line(root, left, y(lo), left + plot_w, y(lo))
    _line(root, left, y(lo), left, y(hi))
    for tick in (lo, (lo + hi) / 2, hi):
        _text(root, left - 6, y(tick) + 4, f"{tick:.2f}", **{"text-anchor": "end"})
    for i, name in enumerate(categories):
        _text(root, x(i), y(lo) + 16, name, **{"text-anchor": "middle"})
    for k, line in enumerate(lines):
        colour = line.colour
        shift = (k - (len(lines) - 1) / 2) * 3.0  # keep overlapping whiskers apart
        drawn = [(x(i) + shift, p) for i, p in enumerate(line.points) if p.value is not None]
        if len(drawn) > 1:
            path = " ".join(f"{px:.1f},{y(p.value or 0):.1f}" for px, p in drawn)
            ET.SubElement(root, "polyline", {"points": path, "fill": "none", "stroke": colour})
        for px, p in drawn:
            if p.low is not None and p.high is not None:
                _line(root, px, y(p.low), px, y(p.high), stroke=colour)
            _circle(root, px, y(p.value or 0), "3", colour)
        _key(root, left + plot_w + 14, k, colour, line.label)
    return _markup(root)


@dataclass(frozen=True)
class Curve:
    label: str
    colour: str
    points: Sequence[tuple[float, float, int]]  # (x, y, n) on [0, 1] x [0, 1]


def reliability(curves: Sequence[Curve], title: str) -> Markup:
    """A reliability diagram (the diagonal is calibrated); a point's area grows with its bin."""
    left, size = 50.0, 240.0
    legend = text_width((c.label for c in curves), 120.0) + 30
    root = _svg(left + size + legend, size + 60, title)

    def x(value: float) -> float:
        return left + value * size

    def y(value: float) -> float:
        return 20 + (1 - value) * size

    _line(root, x(0), y(0), x(1), y(0))
    _line(root, x(0), y(0), x(0), y(1))
    _line(root, x(0), y(0), x(1), y(1), **{"stroke-dasharray": "3,3", "stroke": "#999"})
    for tick in (0.0, 0.5, 1.0):
        _text(root, x(tick), y(0) + 16, f"{tick:.1f}", **{"text-anchor": "middle"})
        _text(root, x(0) - 6, y(tick) + 4, f"{tick:.1f}", **{"text-anchor": "end"})
    _text(root, x(0.5), y(0) + 32, "confidence", **{"text-anchor": "middle"})
    most = max((n for c in curves for _, _, n in c.points), default=1)
    for k, curve in enumerate(curves):
        path = " ".join(f"{x(px):.1f},{y(py):.1f}" for px, py, _ in curve.points)
        ET.SubElement(root, "polyline", {"points": path, "fill": "none", "stroke": curve.colour})
        for px, py, n in curve.points:
            radius = 2 + 4 * (n / most) ** 0.5
            _circle(root, x(px), y(py), f"{radius:.1f}", curve.colour)
        _key(root, left + size + 14, k, curve.colour, curve.label)
    return _markup(root)
