/**
 * A sweep's charts as plotly data: the parameters against the metric (parallel
 * coordinates, one line per trial with a value) and the metric across steps (one line per
 * trial, a pruned trial marked where it stopped). Pure: the components only draw.
 */
import type { Direction, Param, ParamValue, Trial } from "./types";
import { formatMetric, formatParam } from "./trials";

export type Dimension = {
  label: string;
  values: number[];
  range: [number, number];
  tickvals?: number[];
  ticktext?: string[];
};

export type ParcoordsData = { dimensions: Dimension[]; color: number[]; trials: number[] };

function span(values: number[], fallback: [number, number]): [number, number] {
  if (!values.length) return fallback;
  const low = Math.min(fallback[0], ...values);
  const high = Math.max(fallback[1], ...values);
  return low === high ? [low - 1, high + 1] : [low, high];
}

/** The powers of ten from `low` to `high` (exponents), as a log axis's ticks. */
function decades(low: number, high: number): number[] {
  const out: number[] = [];
  for (let e = Math.ceil(low - 1e-9); e <= Math.floor(high + 1e-9); e += 1) out.push(e);
  return out;
}

/**
 * One axis of a parameter. A log float is drawn on log10 of its values (parcoords has no
 * log axis), ticked at powers of ten; choices and inputs are categories, ticked by name.
 */
function dimensionOf(param: Param, values: ParamValue[], label: (param: Param, value: ParamValue) => string): Dimension {
  if (param.type === "float" || param.type === "int") {
    const numbers = values.map((v) => (typeof v === "number" ? v : Number.NaN));
    if (param.type === "float" && param.log && param.low > 0) {
      const logs = numbers.map((v) => Math.log10(v));
      const range = span(logs.filter(Number.isFinite), [Math.log10(param.low), Math.log10(param.high)]);
      const ticks = decades(range[0], range[1]);
      return { label: `${param.name} (log)`, values: logs, range, tickvals: ticks, ticktext: ticks.map((e) => `1e${e}`) };
    }
    return { label: param.name, values: numbers, range: span(numbers.filter(Number.isFinite), [param.low, param.high]) };
  }
  const categories: ParamValue[] = [...param.values];
  for (const value of values) if (!categories.some((c) => String(c) === String(value))) categories.push(value);
  const index = (value: ParamValue) => categories.findIndex((c) => String(c) === String(value));
  return {
    label: param.name,
    values: values.map(index),
    range: [0, Math.max(1, categories.length - 1)],
    tickvals: categories.map((_, i) => i),
    ticktext: categories.map((c) => label(param, c)),
  };
}

/** Trials with a value, each a line across the parameters' axes and the metric's last. */
export function parcoordsData(space: Param[], trials: readonly Trial[], metricLabel: string, label: (param: Param, value: ParamValue) => string = (_, v) => formatParam(v)): ParcoordsData {
  const scored = trials.filter((t): t is Trial & { value: number } => t.value !== null);
  const metric = scored.map((t) => t.value);
  return {
    dimensions: [
      ...space.map((param) => dimensionOf(param, scored.map((t) => t.params[param.name] ?? null), label)),
      { label: metricLabel, values: metric, range: span(metric, [Math.min(...metric), Math.max(...metric)]) },
    ],
    color: metric,
    trials: scored.map((t) => t.number),
  };
}

/** The parcoords trace of that data; the better a trial, the darker its line. */
export function parcoordsTrace(data: ParcoordsData, direction: Direction): Record<string, unknown> {
  return {
    type: "parcoords",
    dimensions: data.dimensions,
    line: { color: data.color, colorscale: "Viridis", reversescale: direction === "minimize", showscale: true, colorbar: { thickness: 10 } },
    labelangle: -20,
    labelside: "top",
  };
}

const COLORS = ["#4f46e5", "#e11d48", "#059669", "#d97706", "#0891b2", "#7c3aed", "#db2777", "#65a30d"];

/** Where a pruned or stopped trial stopped: its stop step, else its last point. */
export function stopPoint(trial: Trial): [number, number] | null {
  const points = trial.intermediate;
  if (!points.length) return null;
  if (trial.stopped_at_step === null) return points[points.length - 1] ?? null;
  const at = [...points].reverse().find(([step]) => step <= (trial.stopped_at_step ?? 0));
  return at ?? points[points.length - 1] ?? null;
}

/**
 * The metric across steps: a line per trial (the best one thicker), and one marker trace
 * of the pruned trials' stops (an ✕ where each stopped).
 */
export function stepTraces(trials: readonly Trial[], bestNumber: number | null): Record<string, unknown>[] {
  const lines = trials
    .filter((t) => t.intermediate.length > 0)
    .map((t) => {
      const color = COLORS[t.number % COLORS.length];
      const best = t.number === bestNumber;
      return {
        type: "scatter",
        x: t.intermediate.map(([step]) => step),
        y: t.intermediate.map(([, value]) => value),
        mode: t.intermediate.length < 2 ? "markers" : "lines",
        name: `#${t.number}${best ? " (best)" : ""}`,
        line: { color, width: best ? 3 : 1.5, dash: t.state === "failed" || t.state === "stopped" ? "dot" : "solid" },
        marker: { color, size: 6 },
        opacity: t.state === "pruned" ? 0.6 : 1,
        hovertemplate: `#${t.number} step %{x}: %{y}<extra></extra>`,
      };
    });
  const pruned = trials.filter((t) => t.state === "pruned").map((t) => ({ trial: t, at: stopPoint(t) })).filter((p): p is { trial: Trial; at: [number, number] } => p.at !== null);
  if (!pruned.length) return lines;
  return [
    ...lines,
    {
      type: "scatter",
      x: pruned.map((p) => p.at[0]),
      y: pruned.map((p) => p.at[1]),
      mode: "markers",
      name: "pruned here",
      marker: { symbol: "x", size: 11, color: "#b45309", line: { width: 2, color: "#b45309" } },
      text: pruned.map((p) => `#${p.trial.number} pruned at step ${p.at[0]}: ${formatMetric(p.at[1])}`),
      hovertemplate: "%{text}<extra></extra>",
    },
  ];
}

/** Parameter importance, most important first, as shares of the total. */
export function importanceRows(values: Record<string, number>): { name: string; value: number; share: number }[] {
  const total = Object.values(values).reduce((sum, v) => sum + Math.max(0, v), 0);
  return Object.entries(values)
    .map(([name, value]) => ({ name, value, share: total > 0 ? Math.max(0, value) / total : 0 }))
    .sort((a, b) => b.value - a.value || a.name.localeCompare(b.name));
}
