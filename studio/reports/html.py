"""The shareable report: one self-contained HTML file for one or more runs.

Built from plain data (the `ReportRun` dicts below), so it needs neither Django nor a
database: the API endpoint fills them from the ORM (studio/reports/data.py) and the
`rlstudio report` command downloads what that endpoint serves. Charts are plotly
figures with plotly.js embedded once (no CDN: the file opens offline); every piece of
user text (names, config values, alert messages, prompts, responses) is escaped, and
plotly's JSON escapes `<`, so nothing in the data can open a tag. Text drawn by plotly
(legend names, titles) is escaped for plotly too (studio/reports/plotly_text.py), which
would otherwise draw a name's `<a href>` as a live link.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from html import escape
from typing import Any, TypedDict

from studio.reports.plotly_text import chart_html

# Charts come in this order when a run has them (then the rest, sorted).
FIRST_KEYS = (
    "critic/score/mean",
    "actor/pg_loss",
    "actor/entropy",
    "actor/ppo_kl",
    "actor/kl_loss",
    "actor/grad_norm",
    "response_length/mean",
    "perf/throughput",
)
VALIDATION_SCORE = re.compile(r"^val-core/.+/reward/mean@")
REWARD_COMPONENT = re.compile(r"^reward/.+/mean$")
MAX_CHARTS = 24  # a report is read top to bottom; dozens more charts help nobody
TEXT_LIMIT = 2000  # characters of a prompt or response shown


class ReportSeries(TypedDict):
    key: str
    steps: list[int]
    values: list[float | None]


class ReportAlert(TypedDict):
    kind: str
    severity: str
    step: int
    message: str


class ReportSample(TypedDict):
    step: int
    score: float
    prompt: str
    response: str
    ground_truth: str


class ReportRun(TypedDict):
    id: int
    name: str
    project: str
    status: str
    reward_error_rate: float | None  # share of scored rows whose reward failed
    created_at: str
    started_at: str | None
    finished_at: str | None
    config: dict[str, Any]
    inputs: dict[str, str]  # what the run used, by row label (studio.references.summary)
    reward_code: str | None  # its reward version's code (None: a built-in, by name)
    metrics: list[ReportSeries]
    alerts: list[ReportAlert]
    best_samples: list[ReportSample]
    worst_samples: list[ReportSample]


def headline_keys(present: set[str]) -> list[str]:
    """The run page's headline charts, in its order (frontend/src/features/runs/lib/
    headline.ts): reward, validation scores, response length, KL, entropy, then the
    reward's components."""
    kl = next(
        (k for k in ("actor/kl_loss", "actor/reward_kl_penalty", "actor/ppo_kl") if k in present),
        None,
    )
    return [
        *(["critic/score/mean"] if "critic/score/mean" in present else []),
        *sorted(k for k in present if VALIDATION_SCORE.match(k)),
        *(["response_length/mean"] if "response_length/mean" in present else []),
        *([kl] if kl else []),
        *(["actor/entropy"] if "actor/entropy" in present else []),
        *sorted(k for k in present if REWARD_COMPONENT.match(k)),
    ]


def pick_keys(keys: Iterable[str]) -> list[str]:
    """Metric keys to chart: the run page's headline ones first, then the other
    well-known ones, then the rest, sorted."""
    present = set(keys)
    first = headline_keys(present)
    first += [key for key in FIRST_KEYS if key in present and key not in first]
    return (first + sorted(present - set(first)))[:MAX_CHARTS]


def chart_keys(runs: Sequence[ReportRun]) -> list[str]:
    return pick_keys(series["key"] for run in runs for series in run["metrics"])


def flatten(tree: Any, prefix: str = "") -> dict[str, Any]:
    """{"a": {"b": 1}} -> {"a.b": 1}; lists and scalars are leaves."""
    if not isinstance(tree, dict) or not tree:
        return {prefix: tree} if prefix else {}
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        flat.update(flatten(value, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def config_differences(runs: Sequence[ReportRun]) -> dict[str, list[Any]]:
    """Dotted config key -> each run's value, for the keys whose values differ."""
    flats = [flatten(run["config"]) for run in runs]
    keys = sorted(set().union(*flats))
    missing = object()
    return {
        key: [flat.get(key) for flat in flats]
        for key in keys
        if len({json.dumps(flat.get(key, missing), sort_keys=True, default=str) for flat in flats})
        > 1
    }


def _label(run: ReportRun) -> str:
    return f"#{run['id']} {run['name']}"


def _figures(runs: Sequence[ReportRun]) -> Iterator[tuple[str, str]]:
    """(metric key, the chart's HTML) for each charted key."""
    for i, key in enumerate(chart_keys(runs)):
        traces = [
            {
                "type": "scatter",
                "mode": "lines",
                "name": _label(run),
                "x": series["steps"],
                "y": [v if v is not None and math.isfinite(v) else None for v in series["values"]],
            }
            for run in runs
            for series in run["metrics"]
            if series["key"] == key
        ]
        figure = {
            "data": traces,
            "layout": {
                "xaxis": {"title": {"text": "step"}},
                "height": 320,
                "margin": {"l": 50, "r": 20, "t": 10, "b": 40},
                "showlegend": len(runs) > 1,
            },
        }
        # plotly.js is embedded once, before the first chart's script.
        yield key, chart_html(figure, include_plotlyjs=i == 0)


def reward_errors_text(rate: float | None) -> str:
    """ "25% of rows" (never rounded to 0% or 100% when it is not), "none", or "" before
    the first step."""
    if rate is None:
        return ""
    if rate <= 0:
        return "none"
    percent = rate * 100
    shown = "<1" if percent < 1 else ">99" if 99 < percent < 100 else f"{percent:.0f}"
    return f"{shown}% of rows"


def cell(value: Any) -> str:
    """One escaped table cell: text as is, anything else as JSON."""
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return f"<td>{escape(text)}</td>"


def _runs_table(runs: Sequence[ReportRun]) -> str:
    head = "".join(
        f"<th>{h}</th>"
        for h in ("Run", "Project", "Status", "Reward errors", "Created", "Started", "Finished")
    )
    rows = "".join(
        "<tr>"
        + "".join(
            cell(v if v is not None else "")
            for v in (
                _label(run),
                run["project"],
                run["status"],
                reward_errors_text(run["reward_error_rate"]),
                run["created_at"],
                run["started_at"],
                run["finished_at"],
            )
        )
        + "</tr>"
        for run in runs
    )
    return f"<table><tr>{head}</tr>{rows}</table>"


def _inputs_section(runs: Sequence[ReportRun]) -> str:
    """What each run used, first: two runs on different data are never "the same"."""
    labels = list(runs[0]["inputs"]) if runs else []
    head = "<th></th>" + "".join(f"<th>{escape(_label(run))}</th>" for run in runs)
    rows = "".join(
        f"<tr><td>{escape(label)}</td>{''.join(cell(run['inputs'][label]) for run in runs)}</tr>"
        for label in labels
    )
    return f"<h2>Inputs</h2><table><tr>{head}</tr>{rows}</table>"


def _config_section(runs: Sequence[ReportRun]) -> str:
    parts = ["<h2>Config</h2>"]
    if len(runs) > 1:
        differing = config_differences(runs)
        head = "<th>key</th>" + "".join(f"<th>{escape(_label(run))}</th>" for run in runs)
        rows = "".join(
            f"<tr><td><code>{escape(key)}</code></td>{''.join(cell(v) for v in values)}</tr>"
            for key, values in differing.items()
        )
        if differing:
            parts.append(
                f"<h3>What differs ({len(differing)} keys)</h3><table><tr>{head}</tr>{rows}</table>"
            )
        else:
            parts.append("<p>The runs have the same config (their inputs are listed above).</p>")
    for run in runs:
        body = escape(json.dumps(run["config"], indent=2, sort_keys=True, default=str))
        parts.append(
            f"<details{' open' if len(runs) == 1 else ''}><summary>{escape(_label(run))}: "
            f"resolved config</summary><pre class='config'>{body}</pre></details>"
        )
    return "".join(parts)


def _reward_diff_section(runs: Sequence[ReportRun]) -> str:
    """How each run's reward code differs from the first run's (compare reports)."""
    if len(runs) < 2:
        return ""
    first = runs[0]
    parts: list[str] = []
    for run in runs[1:]:
        if run["reward_code"] == first["reward_code"]:
            continue
        if first["reward_code"] is None or run["reward_code"] is None:
            parts.append(
                f"<p>{escape(_label(first))} uses {escape(first['inputs']['Reward'])}; "
                f"{escape(_label(run))} uses {escape(run['inputs']['Reward'])}.</p>"
            )
            continue
        lines = difflib.unified_diff(
            first["reward_code"].splitlines(),
            run["reward_code"].splitlines(),
            fromfile=f"{_label(first)}: {first['inputs']['Reward']}",
            tofile=f"{_label(run)}: {run['inputs']['Reward']}",
            lineterm="",
        )
        body = "\n".join(
            f"<span class='{DIFF_CLASS.get(line[:1], '')}'>{escape(line)}</span>" for line in lines
        )
        parts.append(f"<pre class='diff'>{body}</pre>")
    if not parts:
        return "<h2>Reward code</h2><p>Every run uses the same reward code.</p>"
    return "<h2>Reward code</h2>" + "".join(parts)


DIFF_CLASS = {"+": "added", "-": "removed", "@": "hunk"}


def _alerts_section(runs: Sequence[ReportRun]) -> str:
    parts = ["<h2>Alerts</h2>"]
    for run in runs:
        parts.append(f"<h3>{escape(_label(run))}</h3>")
        if not run["alerts"]:
            parts.append("<p>No alerts.</p>")
            continue
        rows = "".join(
            f"<tr class='{escape(a['severity'])}'>{cell(a['step'])}{cell(a['severity'])}"
            f"{cell(a['kind'])}{cell(a['message'])}</tr>"
            for a in run["alerts"]
        )
        parts.append(
            "<table><tr><th>Step</th><th>Severity</th><th>Kind</th><th>Message</th></tr>"
            f"{rows}</table>"
        )
    return "".join(parts)


def _clip(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else text[:TEXT_LIMIT] + " [...]"


def _samples(title: str, samples: Sequence[ReportSample]) -> str:
    if not samples:
        return f"<h4>{title}</h4><p>No samples.</p>"
    cards = "".join(
        f"<div class='sample'><div class='meta'>step {s['step']}, reward {s['score']:.4g}, "
        f"expected {escape(_clip(s['ground_truth']))}</div>"
        f"<pre>{escape(_clip(s['prompt']))}</pre><pre class='response'>"
        f"{escape(_clip(s['response']))}</pre></div>"
        for s in samples
    )
    return f"<h4>{title}</h4>{cards}"


def _samples_section(runs: Sequence[ReportRun]) -> str:
    parts = ["<h2>Samples</h2>"]
    for run in runs:
        parts.append(f"<h3>{escape(_label(run))}</h3>")
        parts.append(_samples("Highest reward", run["best_samples"]))
        parts.append(_samples("Lowest reward", run["worst_samples"]))
    return "".join(parts)


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: .5rem 0 1rem; font-size: .9rem; }
td, th { border: 1px solid #ddd; padding: .25rem .5rem; text-align: left; vertical-align: top; }
tr.critical td { background: #fde8e8; } tr.warning td { background: #fff6e0; }
pre { white-space: pre-wrap; background: #f6f6f6; padding: .5rem; margin: .25rem 0; }
pre.response { background: #eef5ff; } .sample { margin-bottom: 1rem; }
.meta { color: #555; font-size: .85rem; } figure { margin: 0; }
figcaption { font-family: monospace; font-weight: bold; } .charts { display: grid;
grid-template-columns: repeat(auto-fill, minmax(480px, 1fr)); gap: .5rem; }
pre.diff .added { background: #e6ffec; } pre.diff .removed { background: #ffebe9; }
pre.diff .hunk { color: #57606a; }
"""


def render_report(runs: Sequence[ReportRun], generated_at: str) -> str:
    """The whole report as one HTML document."""
    names = ", ".join(_label(run) for run in runs)
    charts = "".join(
        f"<figure><figcaption>{escape(key)}</figcaption>{chart}</figure>"
        for key, chart in _figures(runs)
    )
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>RL Studio report: {escape(names)}</title><style>{STYLE}</style></head><body>"
        f"<h1>RL Studio report</h1><p>{escape(names)}. Generated {escape(generated_at)}.</p>"
        f"{_runs_table(runs)}<h2>Metrics</h2>"
        + (f"<div class='charts'>{charts}</div>" if charts else "<p>No metrics yet.</p>")
        + _inputs_section(runs)
        + _reward_diff_section(runs)
        + _config_section(runs)
        + _alerts_section(runs)
        + _samples_section(runs)
        + "</body></html>"
    )
