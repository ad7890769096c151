/**
 * A sweep's charts as data: the parameters against the metric (parallel coordinates, one
 * line per trial with a value, drawn as SVG) and the metric across steps (plotly traces, one
 * line per trial, a pruned trial marked where it stopped). Pure: the components only draw.
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
 * One axis of a parameter. A log float is drawn on log10 of its values, ticked at powers
 * of ten; choices and inputs are categories, ticked by name.
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

/** Viridis from dark purple (0) to yellow (1), the scale of the metric's colours. */
const VIRIDIS = ["#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"];

function hexToRgb(hex: string): [number, number, number] {
  const n = Number.parseInt(hex.slice(1), 16);
  return [(n >> 16) & 255, (n >> 8) & 255, n & 255];
}

/** The colour of `t` in [0, 1] on the viridis scale. */
export function viridis(t: number): string {
  const x = Math.min(1, Math.max(0, Number.isFinite(t) ? t : 0)) * (VIRIDIS.length - 1);
  const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
  const [a, b] = [hexToRgb(VIRIDIS[i] ?? "#000000"), hexToRgb(VIRIDIS[i + 1] ?? "#000000")];
  const mix = a.map((c, k) => Math.round(c + (x - i) * ((b[k] ?? 0) - c)));
  return `rgb(${mix.join(", ")})`;
}

/** Where a metric value sits between the worst and the best of `values`: 1 is the best, in either direction. */
export function goodness(value: number, values: readonly number[], direction: Direction): number {
  const low = Math.min(...values);
  const high = Math.max(...values);
  if (!(high > low)) return 1;
  const t = (value - low) / (high - low);
  return direction === "maximize" ? t : 1 - t;
}

/** A value's height on its axis, 0 at the bottom of the range and 1 at its top; null for a missing value. */
export function axisPosition(dimension: Dimension, value: number): number | null {
  if (!Number.isFinite(value)) return null;
  const [low, high] = dimension.range;
  return high > low ? (value - low) / (high - low) : 0.5;
}

/** An axis's ticks: its own (categories, powers of ten), else its ends and middle. */
export function axisTicks(dimension: Dimension): { value: number; text: string }[] {
  if (dimension.tickvals && dimension.ticktext) return dimension.tickvals.map((value, i) => ({ value, text: dimension.ticktext?.[i] ?? String(value) }));
  const [low, high] = dimension.range;
  return [low, (low + high) / 2, high].map((value) => ({ value, text: formatMetric(value) }));
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
