"""The shareable report of one sweep: one self-contained HTML file.

Like the runs' report (studio/reports/html.py, whose style and escaping it shares), it is
rendered from plain data: the sweep as the API serves it (`SweepReport["sweep"]`, filled
by studio/reports/data.py with the API's serializer), so the file, the sweep page and
`rlstudio sweeps watch` agree. It holds the sweep's settings (base, space, method,
metric, pruner, budget), the best trial with its config diff, the parameters'
importance, a parallel-coordinates chart of the trials, the metric across steps for every
trial (an x where a pruned one stopped) and the table of trials. The charts mirror the
sweep page's (frontend/src/features/sweeps/lib/charts.ts).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from html import escape
from typing import Any, TypedDict

from studio.reports.html import STYLE, cell
from studio.reports.plotly_text import chart_html

COLORS = ("#4f46e5", "#e11d48", "#059669", "#d97706", "#0891b2", "#7c3aed", "#db2777", "#65a30d")


class SweepReport(TypedDict):
    sweep: dict[str, Any]  # studio.sweeps.serializers.SweepDetailSerializer's data
    base_request: dict[str, Any]  # config, overrides and inputs of a preset base
    best_inputs: dict[str, str]  # the best trial's run's inputs, by row label
    generated_at: str


def number(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return "–" if value is None else json.dumps(value)
    if isinstance(value, float):
        return f"{value:.4g}" if math.isfinite(value) else "–"
    return str(value)


def _params(params: dict[str, Any]) -> str:
    return ", ".join(f"{name}={number(value)}" for name, value in params.items())


def _run(trial: dict[str, Any]) -> str:
    run = trial.get("run")
    return f"#{run['id']} {run['name']}" if run else "–"


def _rows(pairs: dict[str, Any]) -> str:
    return "".join(f"<tr>{cell(k)}{cell(v)}</tr>" for k, v in pairs.items())


def _range(param: dict[str, Any]) -> str:
    if param["type"] == "float":
        scale = "log" if param.get("log") else "linear"
        return f"{number(param['low'])} to {number(param['high'])}, {scale}"
    if param["type"] == "int":
        return f"{param['low']:g} to {param['high']:g}, step {param.get('step') or 1}"
    return ", ".join(number(v) for v in param.get("values", []))


def _settings_section(report: SweepReport) -> str:
    s = report["sweep"]
    base = s["base_run"]
    request = report["base_request"]
    if base:
        base_text = f"a clone of run #{base['id']} {base['name']}"
    else:
        base_text = f"preset {s['preset']}" if s["preset"] else "a config"
    pruner = s["pruner"] or {}
    kind = pruner.get("kind", "none")
    pruner_text = "none" if kind == "none" else f"{kind}, from step {pruner.get('min_steps', 1)}"
    if kind == "asha":
        pruner_text += f", 1 in {pruner.get('reduction_factor', 2)} goes on at a rung"
    budget = f"{s['max_trials']} trials, {s['parallelism']} at once"
    if s["grid_size"] is not None:
        budget += f" (the grid has {s['grid_size']})"
    settings = {
        "Base": base_text,
        "Overrides": " ".join(request.get("overrides") or []) or "–",
        "Inputs": ", ".join(f"{k}={v}" for k, v in (request.get("inputs") or {}).items()) or "–",
        "Method": s["method"],
        "Seed": s["seed"],
        "Metric": f"{s['direction']} {s['metric_label']}"
        + (f" (scored by {s['metric_reward']})" if s["metric_reward"] else ""),
        "Pruner": pruner_text,
        "Budget": budget,
        "Stop a trial on a critical alert": "yes" if s["stop_on_critical_alert"] else "no",
    }
    head = "<tr><th>Parameter</th><th>Type</th><th>Searched</th></tr>"
    space = "".join(
        f"<tr><td><code>{escape(p['name'])}</code></td>{cell(p['type'])}{cell(_range(p))}</tr>"
        for p in s["space"]
    )
    parts = [
        f"<h2>Settings</h2><table>{_rows(settings)}</table>",
        f"<h3>Search space</h3><table>{head}{space}</table>",
    ]
    if request.get("config"):
        body = escape(json.dumps(request["config"], indent=2, sort_keys=True, default=str))
        parts.append(
            f"<details><summary>Base config request</summary><pre class='config'>{body}</pre>"
            "</details>"
        )
    return "".join(parts)


def _best_section(report: SweepReport) -> str:
    sweep = report["sweep"]
    best = sweep["best_trial"]
    if best is None:
        return "<h2>Best trial</h2><p>No trial has completed with a value yet.</p>"
    facts = {
        "Trial": f"#{best['number']}",
        "Run": _run(best),
        sweep["metric_label"]: number(best["value"]),
        "Parameters": _params(best["params"]),
    }
    diff = best["config_diff"]
    rows = "".join(
        f"<tr><td><code>{escape(c['path'])}</code></td>{cell(c['base'])}{cell(c['value'])}</tr>"
        for c in diff
    )
    table = (
        f"<h3>Its config against the base ({len(diff)} keys)</h3>"
        f"<table><tr><th>Key</th><th>Base</th><th>Trial</th></tr>{rows}</table>"
        if diff
        else "<p>Its config is the base's.</p>"
    )
    inputs = (
        f"<h3>Its inputs</h3><table>{_rows(report['best_inputs'])}</table>"
        if report["best_inputs"]
        else ""
    )
    return f"<h2>Best trial</h2><table>{_rows(facts)}</table>{inputs}{table}"


def _importance_section(sweep: dict[str, Any]) -> str:
    importance = sweep["importance"]
    if not importance:
        return "<h2>Parameter importance</h2><p>Computed once at least 4 trials have completed.</p>"
    values = importance["values"]
    total = sum(max(0.0, v) for v in values.values()) or 1.0
    rows = "".join(
        f"<tr><td><code>{escape(name)}</code></td>{cell(number(value))}"
        f"<td><span class='bar' style='width:{max(0.0, value) / total * 200:.0f}px'></span> "
        f"{max(0.0, value) / total:.0%}</td></tr>"
        for name, value in sorted(values.items(), key=lambda item: -item[1])
    )
    return (
        f"<h2>Parameter importance</h2><p>By {escape(importance['method'])} over the "
        "complete trials: how much each parameter accounts for the metric's spread.</p>"
        f"<table><tr><th>Parameter</th><th>Importance</th><th>Share</th></tr>{rows}</table>"
    )


def _span(values: Sequence[float], fallback: tuple[float, float]) -> list[float]:
    finite = [v for v in values if math.isfinite(v)]
    low, high = (min(finite), max(finite)) if finite else fallback
    low, high = min(low, fallback[0]), max(high, fallback[1])
    return [low, high] if high > low else [low - 0.5, high + 0.5]


def _dimension(param: dict[str, Any], values: list[Any]) -> dict[str, Any]:
    """One axis: a log float on log10 of its values, ticked at powers of ten (parcoords has
    no log axis); choices and inputs as categories ticked by value."""
    name = param["name"]
    if param["type"] in ("float", "int"):
        numbers = [
            float(v) if isinstance(v, int | float) and not isinstance(v, bool) else math.nan
            for v in values
        ]
        if param["type"] == "float" and param.get("log") and param["low"] > 0:
            logs = [math.log10(v) if v > 0 else math.nan for v in numbers]
            low, high = _span(logs, (math.log10(param["low"]), math.log10(param["high"])))
            ticks = list(range(math.ceil(low), math.floor(high) + 1))
            return {
                "label": f"{name} (log)",
                "values": logs,
                "range": [low, high],
                "tickvals": ticks,
                "ticktext": [f"1e{t}" for t in ticks],
            }
        return {
            "label": name,
            "values": numbers,
            "range": _span(numbers, (param["low"], param["high"])),
        }
    categories: list[Any] = list(param.get("values", []))
    for value in values:
        if not any(str(c) == str(value) for c in categories):
            categories.append(value)
    keys = [str(c) for c in categories]
    return {
        "label": name,
        "values": [keys.index(str(v)) for v in values],
        "range": [0, max(1, len(categories) - 1)],
        "tickvals": list(range(len(categories))),
        "ticktext": [number(c) for c in categories],
    }


def parcoords_figure(sweep: dict[str, Any]) -> dict[str, Any] | None:
    """Trials with a value, each a line across the parameters' axes and the metric's."""
    scored = [t for t in sweep["trials"] if t["value"] is not None]
    if not scored:
        return None
    metric = [float(t["value"]) for t in scored]
    dimensions = [
        _dimension(p, [t["params"].get(p["name"]) for t in scored]) for p in sweep["space"]
    ]
    dimensions.append(
        {
            "label": sweep["metric_label"],
            "values": metric,
            "range": _span(metric, (min(metric), max(metric))),
        }
    )
    trace = {
        "type": "parcoords",
        "dimensions": dimensions,
        "line": {
            "color": metric,
            "colorscale": "Viridis",
            "reversescale": sweep["direction"] == "minimize",
            "showscale": True,
            "colorbar": {"thickness": 10},
        },
        "labelangle": -20,
        "labelside": "top",
    }
    layout = {"height": 420, "margin": {"l": 60, "r": 60, "t": 90, "b": 30}}
    return {"data": [trace], "layout": layout}


def stop_point(trial: dict[str, Any]) -> tuple[float, float] | None:
    """Where a pruned trial stopped: its stop step's value, else its last point."""
    points = trial["intermediate"]
    if not points:
        return None
    at = trial["stopped_at_step"]
    if at is not None:
        before = [p for p in points if p[0] <= at]
        if before:
            return before[-1][0], before[-1][1]
    return points[-1][0], points[-1][1]


def steps_figure(sweep: dict[str, Any]) -> dict[str, Any] | None:
    """The metric across steps: a line per trial (the best one thicker), and an x where
    each pruned trial stopped."""
    best = (sweep["best_trial"] or {}).get("number")
    traces: list[dict[str, Any]] = []
    for t in sweep["trials"]:
        if not t["intermediate"]:
            continue
        color = COLORS[t["number"] % len(COLORS)]
        dotted = t["state"] in ("failed", "stopped")
        traces.append(
            {
                "type": "scatter",
                "mode": "lines" if len(t["intermediate"]) > 1 else "markers",
                "name": f"#{t['number']} {t['state']}" + (" (best)" if t["number"] == best else ""),
                "x": [p[0] for p in t["intermediate"]],
                "y": [p[1] for p in t["intermediate"]],
                "line": {
                    "color": color,
                    "width": 3 if t["number"] == best else 1.5,
                    "dash": "dot" if dotted else "solid",
                },
                "marker": {"color": color, "size": 6},
                "opacity": 0.6 if t["state"] == "pruned" else 1,
            }
        )
    if not traces:
        return None
    pruned = [(t, stop_point(t)) for t in sweep["trials"] if t["state"] == "pruned"]
    stops = [(t, at) for t, at in pruned if at is not None]
    if stops:
        traces.append(
            {
                "type": "scatter",
                "mode": "markers",
                "name": "pruned here",
                "x": [at[0] for _, at in stops],
                "y": [at[1] for _, at in stops],
                "marker": {"symbol": "x", "size": 11, "color": "#b45309"},
                "text": [f"#{t['number']} pruned at step {at[0]}" for t, at in stops],
                "hovertemplate": "%{text}: %{y}<extra></extra>",
            }
        )
    layout = {
        "xaxis": {"title": {"text": "step"}},
        "yaxis": {"title": {"text": sweep["metric_label"]}},
        "height": 380,
        "margin": {"l": 60, "r": 20, "t": 10, "b": 40},
    }
    return {"data": traces, "layout": layout}


def _charts_section(sweep: dict[str, Any]) -> str:
    parts: list[str] = []
    embedded = False
    for title, figure, empty in (
        ("Parallel coordinates", parcoords_figure(sweep), "No trial has a value yet."),
        (
            f"{sweep['metric_label']} across steps",
            steps_figure(sweep),
            "No trial has reported the metric yet.",
        ),
    ):
        parts.append(f"<h2>{escape(title)}</h2>")
        if figure is None:
            parts.append(f"<p>{empty}</p>")
            continue
        # plotly.js is embedded once, before the first chart's script.
        parts.append(f"<figure>{chart_html(figure, include_plotlyjs=not embedded)}</figure>")
        embedded = True
    return "".join(parts)


def _trials_section(sweep: dict[str, Any]) -> str:
    head = (
        "".join(
            f"<th>{h}</th>"
            for h in (
                "#",
                "Parameters",
                "State",
                escape(sweep["metric_label"]),
                "Steps",
                "Stop reason",
            )
        )
        + "<th>Run</th>"
    )
    best = (sweep["best_trial"] or {}).get("number")
    rows = "".join(
        f"<tr{' class=best' if t['number'] == best else ''}>"
        + "".join(
            cell(v)
            for v in (
                f"{t['number']}",
                _params(t["params"]),
                t["state"]
                + (f" at step {t['stopped_at_step']}" if t["stopped_at_step"] is not None else ""),
                number(t["value"]),
                str(t["steps"]),
                t["stop_reason"],
                _run(t),
            )
        )
        + "</tr>"
        for t in sweep["trials"]
    )
    return f"<h2>Trials ({len(sweep['trials'])})</h2><table><tr>{head}</tr>{rows}</table>"


SWEEP_STYLE = (
    " tr.best td { background: #e6ffec; } .bar { display: inline-block; height: .7rem;"
    " background: #4f46e5; vertical-align: middle; }"
)


def render_sweep_report(report: SweepReport) -> str:
    """The whole report as one HTML document."""
    s = report["sweep"]
    title = f"#{s['id']} {s['name']}"
    counts = ", ".join(f"{n} {state}" for state, n in s["trial_counts"].items() if n)
    facts = {
        "Project": s["project"],
        "Status": s["status"] + (f" ({s['status_reason']})" if s["status_reason"] else ""),
        "Trials": f"{sum(s['trial_counts'].values())} of {s['max_trials']}"
        + (f": {counts}" if counts else ""),
        "Created": f"{s['created_at']} by {s['created_by']}",
    }
    return (
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>"
        f"<title>RL Studio sweep report: {escape(title)}</title>"
        f"<style>{STYLE}{SWEEP_STYLE}</style></head><body><h1>RL Studio sweep report</h1>"
        f"<p>Sweep {escape(title)}. Generated {escape(report['generated_at'])}.</p>"
        f"<table>{_rows(facts)}</table>"
        + _settings_section(report)
        + _best_section(report)
        + _importance_section(s)
        + _charts_section(s)
        + _trials_section(s)
        + "</body></html>"
    )
