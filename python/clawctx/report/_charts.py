"""The report's charts: matplotlib figures rendered to inline SVG.

matplotlib is imported here and nowhere else, lazily, so ``import clawctx.report`` works
without it and the error names the extra to install.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from clawctx.errors import ReportDependencyError
from clawctx.report._session import ContextSeries

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Colours (matplotlib's default cycle, named for what they mark).
_BLUE, _ORANGE, _GREEN, _RED, _PURPLE, _GREY = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#7f7f7f",
)


def _matplotlib() -> Any:
    try:
        import matplotlib
    except ImportError as err:
        raise ReportDependencyError(
            "clawctx reports draw their charts with matplotlib, which is not installed: "
            'pip install "clawctx[report]"'
        ) from err
    return matplotlib


@contextmanager
def _style(name: str) -> Iterator[None]:
    """matplotlib settings for one chart.

    ``svg.fonttype = none`` keeps text as ``<text>`` (the browser draws it: smaller files,
    selectable labels); ``svg.hashsalt`` makes the generated ids stable and distinct per chart,
    so several inline SVGs on one page never share a clip-path id; ``text.parse_math = False``
    keeps a ``$`` in a tool name or path from being read as TeX.
    """
    matplotlib = _matplotlib()
    settings = {
        "svg.fonttype": "none",
        "svg.hashsalt": f"clawctx-{name}",
        "text.parse_math": False,
        "font.family": "sans-serif",
        "font.sans-serif": ["DejaVu Sans", "Helvetica", "Arial"],
        "font.size": 9.0,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.titlesize": 10.0,
        "legend.fontsize": 8.0,
        "legend.frameon": False,
    }
    with matplotlib.rc_context(settings), warnings.catch_warnings():
        # Labels come from session files: a glyph DejaVu lacks (CJK, emoji) only affects
        # matplotlib's layout estimate; the browser draws the text with its own fonts.
        warnings.filterwarnings(
            "ignore", message=r"Glyph .* missing from font", category=UserWarning
        )
        yield


def _figure(width: float, height: float) -> Figure:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _svg(figure: Figure, name: str, label: str) -> str:
    """The figure as an ``<svg>`` element to inline in HTML (no XML prolog, no metadata)."""
    buffer = io.StringIO()
    figure.savefig(
        buffer,
        format="svg",
        # No creator, date, format or type: no matplotlib URL or timestamp in the page, and the
        # same session gives the same bytes.
        metadata={"Creator": None, "Date": None, "Format": None, "Type": None},
    )
    text = buffer.getvalue()
    start = text.index("<svg")
    label_attr = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return (
        f'<svg class="chart" data-chart="{name}" role="img" aria-label="{label_attr}" '
        + text[start + len("<svg ") :].strip()
    )


def _tokens(value: float, _position: object = None) -> str:
    """Axis labels: 0, 950, 12k, 1.2M."""
    magnitude = abs(value)
    if magnitude >= 1e6:
        return f"{value / 1e6:.3g}M"
    if magnitude >= 1e3:
        return f"{value / 1e3:.3g}k"
    return f"{value:.0f}"


def _bytes(value: float, _position: object = None) -> str:
    for unit, factor in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if abs(value) >= factor:
            return f"{value / factor:.3g} {unit}"
    return f"{value:.0f} B"


def _short(text: str, width: int = 42) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _log_labels(axis: Any, formatter: Any) -> None:
    """Labels on a log axis: ``formatter`` at the decades, none at the minor ticks (matplotlib's
    default minor labels are TeX, which ``text.parse_math = False`` would print raw)."""
    from matplotlib.ticker import FuncFormatter, NullFormatter

    axis.set_major_formatter(FuncFormatter(formatter))
    axis.set_minor_formatter(NullFormatter())


def _empty(ax: Axes, text: str) -> None:
    ax.text(0.5, 0.5, text, ha="center", va="center", transform=ax.transAxes, color=_GREY)
    ax.set_xticks([])
    ax.set_yticks([])


def context_chart(series: ContextSeries, context_window: int) -> str:
    """Context size per assistant turn against the window, with compactions and branch points."""
    from matplotlib.ticker import FuncFormatter

    with _style("context"):
        figure = _figure(10.0, 3.8)
        ax = figure.add_subplot()
        turns = series.turns
        if not len(turns):
            _empty(ax, "no assistant turns on the leaf path")
        else:
            present = ~np.isnan(series.recorded)
            if present.any():
                ax.plot(
                    turns,
                    series.estimated,
                    color=_GREY,
                    linewidth=0.8,
                    linestyle="--",
                    label="estimate (chars/4), every turn",
                )
                ax.plot(
                    turns[present],
                    series.recorded[present],
                    color=_BLUE,
                    linewidth=1.3,
                    label="recorded usage",
                )
                if (~present).any():
                    ax.scatter(
                        turns[~present],
                        series.estimated[~present],
                        s=7,
                        color=_ORANGE,
                        zorder=3,
                        label="estimate where no usage is recorded",
                    )
            else:
                ax.plot(
                    turns,
                    series.estimated,
                    color=_ORANGE,
                    linewidth=1.3,
                    label="estimate (chars/4): no usage recorded",
                )
            ax.axhline(
                context_window,
                color=_RED,
                linestyle=":",
                linewidth=1.2,
                label=f"context window ({context_window:,})",
            )
            x_axis = ax.get_xaxis_transform()
            if len(series.compactions):
                ax.vlines(
                    series.compactions,
                    0,
                    1,
                    transform=x_axis,
                    color=_GREEN,
                    alpha=0.6,
                    linewidth=0.8,
                    label="compaction",
                )
            if len(series.branch_points):
                ax.scatter(
                    series.branch_points,
                    np.full(len(series.branch_points), 0.02),
                    transform=x_axis,
                    marker="^",
                    s=22,
                    color=_PURPLE,
                    zorder=4,
                    clip_on=False,
                    label="branch point",
                )
            top = max(float(series.peak), float(context_window)) * 1.12
            ax.set_ylim(0, top)
            ax.set_xlim(0.5, float(turns[-1]) + 0.5)
            ax.yaxis.set_major_formatter(FuncFormatter(_tokens))
            ax.set_xlabel("assistant turn on the leaf path")
            ax.set_ylabel("context tokens")
            ax.grid(axis="y", color="#e5e5e5", linewidth=0.6)
            # Above the plot: a long session fills the whole axes with lines.
            figure.legend(loc="outside upper center", ncols=3)
        return _svg(figure, "context", "Context size per assistant turn")


def bar_chart(
    name: str,
    labels: Sequence[str],
    values: Sequence[int],
    *,
    title: str,
    xlabel: str,
    color: str = _BLUE,
    bytes_axis: bool = False,
    width: float = 5.2,
) -> str:
    """A horizontal bar chart, largest on top, each bar labelled with its value."""
    from matplotlib.ticker import FuncFormatter

    formatter = _bytes if bytes_axis else _tokens
    with _style(name):
        height = 1.0 + 0.26 * max(len(labels), 3)
        figure = _figure(width, height)
        ax = figure.add_subplot()
        if not labels:
            _empty(ax, "nothing to show")
        else:
            positions = np.arange(len(labels))[::-1]
            bars = ax.barh(positions, list(values), color=color, height=0.7)
            ax.set_yticks(positions, [_short(label) for label in labels])
            ax.bar_label(bars, labels=[formatter(v) for v in values], padding=3, fontsize=8)
            ax.xaxis.set_major_formatter(FuncFormatter(formatter))
            ax.set_xlabel(xlabel)
            ax.margins(x=0.15)
        ax.set_title(title, loc="left")
        return _svg(figure, name, title)


def size_histogram(sizes: Sequence[int] | np.ndarray) -> str:
    """Sessions by file size, on log-spaced bins."""
    from matplotlib.ticker import MaxNLocator

    with _style("sizes"):
        figure = _figure(5.2, 3.0)
        ax = figure.add_subplot()
        values = np.asarray(sizes, dtype=np.float64)
        values = values[values > 0]
        if not len(values):
            _empty(ax, "no readable sessions")
        else:
            low, high = float(values.min()), float(values.max())
            if high <= low:
                high = low * 2
            ax.hist(values, bins=np.geomspace(low, high, 30).tolist(), color=_BLUE)
            ax.set_xscale("log")
            _log_labels(ax.xaxis, _bytes)
            ax.yaxis.set_major_locator(MaxNLocator(integer=True))
            ax.set_xlabel("file size")
            ax.set_ylabel("sessions")
        ax.set_title("Sessions by size", loc="left")
        return _svg(figure, "sizes", "Sessions by file size")


def size_tokens_scatter(
    sizes: np.ndarray, tokens: np.ndarray, damaged: np.ndarray, max_points: int
) -> str:
    """Estimated tokens against file size per session, damaged sessions in red."""
    with _style("size-tokens"):
        figure = _figure(5.2, 3.0)
        ax = figure.add_subplot()
        keep = (sizes > 0) & (tokens > 0)
        if not keep.any():
            _empty(ax, "no readable sessions")
        else:
            index = np.flatnonzero(keep)
            if len(index) > max_points:
                index = index[np.linspace(0, len(index) - 1, max_points).round().astype(np.int64)]
            bad = damaged[index]
            ax.scatter(sizes[index][~bad], tokens[index][~bad], s=6, color=_BLUE, label="intact")
            if bad.any():
                ax.scatter(sizes[index][bad], tokens[index][bad], s=9, color=_RED, label="damaged")
            ax.set_xscale("log")
            ax.set_yscale("log")
            _log_labels(ax.xaxis, _bytes)
            _log_labels(ax.yaxis, _tokens)
            ax.set_xlabel("file size")
            ax.set_ylabel("estimated tokens")
            ax.legend(loc="upper left")
        ax.set_title("Tokens against size", loc="left")
        return _svg(figure, "size-tokens", "Estimated tokens against file size")


def cache_chart(
    turns: Sequence[int], hit_rates: Sequence[float | None], breaks: Sequence[tuple[int, str]]
) -> str:
    """The prompt cache hit rate per assistant turn, from the recorded usage, with the turns
    whose request broke the cache marked (a red line, labelled with the cause)."""
    from matplotlib.ticker import PercentFormatter

    with _style("cache"):
        figure = _figure(10.0, 3.0)
        ax = figure.add_subplot()
        x = np.asarray(turns, dtype=np.float64)
        y = np.asarray([np.nan if r is None else r * 100 for r in hit_rates], dtype=np.float64)
        known = ~np.isnan(y)
        if not known.any():
            _empty(ax, "no cache usage recorded on any assistant turn")
        else:
            ax.plot(x[known], y[known], color=_BLUE, linewidth=1.2, label="cache hit rate")
            ax.scatter(x[known], y[known], s=6, color=_BLUE, zorder=3)
            if breaks:
                where = [t for t, _ in breaks]
                ax.vlines(
                    where,
                    0,
                    100,
                    color=_RED,
                    alpha=0.7,
                    linewidth=1.0,
                    label=f"cache breaks ({len(breaks)})",
                )
                for turn, cause in breaks[:20]:
                    ax.text(turn, 101, cause, color=_RED, fontsize=7, rotation=45, ha="left")
            ax.set_ylim(0, 110)
            ax.yaxis.set_major_formatter(PercentFormatter())
            ax.set_xlabel("assistant turn")
            ax.set_ylabel("read from the cache")
            ax.legend(loc="lower right")
        return _svg(figure, "cache", "Prompt cache hit rate per assistant turn, breaks marked")
