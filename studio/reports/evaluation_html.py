"""The shareable report of one evaluation: one self-contained HTML file.

Like the runs' report (studio/reports/html.py, whose style and escaping it shares), it is
rendered from plain data (`EvaluationReport`, filled by studio/reports/data.py from the
same results the API serves), so the file, the page and `rlstudio eval show` agree. It
holds what the evaluation used (models and checkpoints, prompts, reward, sampling), the
models side by side, the scores per data source, and the chart across a run's
checkpoints with its data as a table.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from html import escape
from typing import Any, TypedDict

from studio.reports.html import STYLE, cell
from studio.reports.plotly_text import chart_html

# (key in a model's scores, column title; `{k}` is the evaluation's k)
METRICS = (
    ("mean_score", "Mean score"),
    ("pass_at_k", "pass@{k}"),
    ("mean_at_k", "mean@{k}"),
    ("mean_length", "Length (tokens)"),
    ("error_rate", "Error rate"),
)


class EvaluationReport(TypedDict):
    id: int
    name: str
    project: str
    status: str
    created_at: str
    started_at: str | None
    finished_at: str | None
    inputs: dict[str, str]  # prompts, reward, ... by row label
    settings: dict[str, Any]  # studio.evaluations.results.settings_of
    models: list[dict[str, Any]]  # studio.evaluations.results.results()["models"]
    question: dict[str, str] | None  # an "Ask the checkpoints" evaluation's sample
    config: dict[str, Any]


def _number(value: float | None, key: str = "") -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{value:.1f}" if key == "mean_length" else f"{value:.3f}"


def _what(model: dict[str, Any]) -> str:
    if model["kind"] == "checkpoint":
        run = f"run #{model['run']} {model['run_name']}"
        return f"checkpoint of {run}, step {model['checkpoint_step']}"
    return f"model #{model['model']}"


def _models_section(report: EvaluationReport) -> str:
    k = report["settings"]["k"]
    head = "".join(
        f"<th>{escape(h)}</th>"
        for h in (
            "#",
            "Model",
            "What",
            "Prompts",
            "Responses",
            *(t.format(k=k) for _, t in METRICS),
        )
    )
    rows = ""
    for m in report["models"]:
        scores = m["scores"] or {}
        cells = [str(m["step"]), m["label"], _what(m), str(scores.get("prompts", "–"))]
        cells.append(str(scores.get("responses", "–")))
        cells += [_number(scores.get(key), key) for key, _ in METRICS]
        rows += "<tr>" + "".join(cell(c) for c in cells) + "</tr>"
    return f"<h2>Models side by side</h2><table><tr>{head}</tr>{rows}</table>"


def _sources_section(report: EvaluationReport) -> str:
    k = report["settings"]["k"]
    sources = sorted({s for m in report["models"] for s in m["by_data_source"]})
    if not sources:
        return ""
    head = "<th>Data source</th>" + "".join(
        f"<th>{escape(m['label'])}</th>" for m in report["models"]
    )
    rows = ""
    for source in sources:
        cells = []
        for m in report["models"]:
            s = m["by_data_source"].get(source)
            cells.append(
                f"{_number(s['mean_score'])} · pass@{k} {_number(s['pass_at_k'])}" if s else "–"
            )
        rows += f"<tr>{cell(source)}{''.join(cell(c) for c in cells)}</tr>"
    return f"<h3>By data source (mean score · pass@{k})</h3><table><tr>{head}</tr>{rows}</table>"


def checkpoint_points(models: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scored checkpoints of the first evaluated run, by training step (the chart's x)."""
    run = next((m["run"] for m in models if m["kind"] == "checkpoint"), None)
    points = [m for m in models if m["kind"] == "checkpoint" and m["run"] == run and m["scores"]]
    return sorted(points, key=lambda m: m["checkpoint_step"])


def _baseline(models: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    return next((m for m in models if m["kind"] == "model" and m["scores"]), None)


def _chart_section(report: EvaluationReport) -> str:
    points = checkpoint_points(report["models"])
    if not points:
        return ""
    k = report["settings"]["k"]
    base = _baseline(report["models"])
    steps = [m["checkpoint_step"] for m in points]
    traces: list[dict[str, Any]] = []
    for key, title in METRICS[:3]:  # the scores share a 0..1 axis; length would not
        name = title.format(k=k)
        traces.append(
            {
                "type": "scatter",
                "mode": "lines+markers",
                "name": name,
                "x": steps,
                "y": [m["scores"][key] for m in points],
            }
        )
        if base is not None:
            traces.append(
                {
                    "type": "scatter",
                    "mode": "lines",
                    "name": f"{name}: {base['label']}",
                    "x": [steps[0], steps[-1]],
                    "y": [base["scores"][key]] * 2,
                    "line": {"dash": "dash"},
                }
            )
    figure = {
        "data": traces,
        "layout": {
            "xaxis": {"title": {"text": "checkpoint step"}},
            "height": 360,
            "margin": {"l": 50, "r": 20, "t": 10, "b": 40},
        },
    }
    chart = chart_html(figure, include_plotlyjs=True)
    head = "<th>Step</th><th>Model</th>" + "".join(
        f"<th>{escape(t.format(k=k))}</th>" for _, t in METRICS
    )
    listed = ([base] if base else []) + points
    rows = "".join(
        "<tr>"
        + cell("base" if m is base else str(m["checkpoint_step"]))
        + cell(m["label"])
        + "".join(cell(_number(m["scores"][key], key)) for key, _ in METRICS)
        + "</tr>"
        for m in listed
    )
    return (
        "<h2>Across checkpoints</h2>"
        + (f"<p>Dashed: {escape(base['label'])}, the baseline.</p>" if base else "")
        + f"<figure>{chart}</figure><h3>Chart data</h3><table><tr>{head}</tr>{rows}</table>"
    )


def _rows(pairs: dict[str, Any]) -> str:
    return "".join(f"<tr>{cell(k)}{cell(v)}</tr>" for k, v in pairs.items())


def _provenance_section(report: EvaluationReport) -> str:
    s = report["settings"]
    sampling = {
        "Decoding": "greedy" if s["greedy"] else f"sampled at temperature {s['temperature']}",
        "Responses per prompt (k)": s["k"],
        "Pass threshold": s["pass_threshold"],
        "Prompts": s["max_prompts"] or "all",
        "Max new tokens": s["max_new_tokens"],
        "Seed": report["config"].get("trainer", {}).get("seed", "–"),
    }
    parts = [f"<h2>Inputs</h2><table>{_rows(report['inputs'])}</table>"]
    if report["question"]:
        parts.append(f"<h3>The sample asked</h3><table>{_rows(report['question'])}</table>")
    parts.append(f"<h3>Sampling</h3><table>{_rows(sampling)}</table>")
    body = escape(json.dumps(report["config"], indent=2, sort_keys=True, default=str))
    parts.append(
        f"<details><summary>Resolved config</summary><pre class='config'>{body}</pre></details>"
    )
    return "".join(parts)


def render_evaluation_report(report: EvaluationReport, generated_at: str) -> str:
    """The whole report as one HTML document."""
    title = f"#{report['id']} {report['name']}"
    facts = {
        "Project": report["project"],
        "Status": report["status"],
        "Created": report["created_at"],
        "Started": report["started_at"] or "",
        "Finished": report["finished_at"] or "",
    }
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>RL Studio evaluation report: {escape(title)}</title><style>{STYLE}</style>"
        f"</head><body><h1>RL Studio evaluation report</h1><p>Evaluation {escape(title)}. "
        f"Generated {escape(generated_at)}.</p><table>{_rows(facts)}</table>"
        + _models_section(report)
        + _sources_section(report)
        + _chart_section(report)
        + _provenance_section(report)
        + "</body></html>"
    )
