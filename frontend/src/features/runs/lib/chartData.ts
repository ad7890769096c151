/**
 * Chart data handling, kept pure so it is tested without a browser: series built from
 * the metrics API, live points appended, a finer window merged over a downsampled
 * series (backfill), min/max bands of downsampled buckets, and EMA smoothing.
 */

/** `time`: unix seconds the step was emitted (the trainer's clock), when known. */
export type Point = { step: number; value: number | null; time?: number };
/** The server's downsampling grid: bucket i covers [origin + i * width, origin + (i + 1) * width). */
export type Buckets = { origin: number; width: number };
export type ChartSeries = { key: string; run: number; points: Point[]; downsampled: boolean; buckets?: Buckets };
/** `times[i]`: the bucket's mean time, null when a point in it has no time. */
export type Band = { steps: number[]; times: (number | null)[]; lo: number[]; hi: number[] };
/** What the charts' x axis shows: the step, or the wall-clock time (a plotly date axis). */
export type XAxis = "step" | "time";

/**
 * Metric groups by prefix: `actor/pg_loss` is in `actor`, `loss` in `other`. The reward's
 * own metrics (verl logs them as `critic/score/*` and `critic/rewards/*`) join the
 * `reward` group beside its components and error rate.
 */
export function groupOf(key: string): string {
  if (/^critic\/(score|rewards)(\/|$)/.test(key)) return "reward";
  const slash = key.indexOf("/");
  return slash > 0 ? key.slice(0, slash) : "other";
}

/** Keys grouped by prefix, groups in a familiar order first (verl's dashboards). */
export function groupKeys(keys: string[]): [string, string[]][] {
  const ORDER = ["reward", "val-core", "response_length", "actor", "critic", "perf", "timing_s"];
  const groups = new Map<string, string[]>();
  for (const key of [...keys].sort()) {
    const group = groupOf(key);
    groups.set(group, [...(groups.get(group) ?? []), key]);
  }
  const rank = (g: string) => (ORDER.includes(g) ? ORDER.indexOf(g) : ORDER.length);
  return [...groups.entries()].sort((a, b) => rank(a[0]) - rank(b[0]) || a[0].localeCompare(b[0]));
}

export function fromApi(series: {
  run: number;
  key: string;
  steps: number[];
  values: (number | null)[];
  downsampled: boolean;
  times?: (number | null)[];
  bucket_origin?: number;
  bucket_width?: number;
}): ChartSeries {
  const width = series.bucket_width ?? 1;
  return {
    run: series.run,
    key: series.key,
    downsampled: series.downsampled,
    ...(series.downsampled && width > 1 ? { buckets: { origin: series.bucket_origin ?? 0, width } } : {}),
    points: series.steps.map((step, i) => {
      const time = series.times?.[i];
      return time === null || time === undefined ? { step, value: series.values[i] ?? null } : { step, value: series.values[i] ?? null, time };
    }),
  };
}

/**
 * A point's x on the chosen axis. Time is given to plotly as epoch milliseconds on a
 * date axis (shown in UTC); a point with no known time is null, which plotly leaves out.
 */
export function xOf(point: { step: number; time?: number | null }, axis: XAxis): number | null {
  if (axis === "step") return point.step;
  return point.time === undefined || point.time === null ? null : point.time * 1000;
}

/**
 * Appends live points in step order. A point at or before the last step replaces the
 * point at that step (a resumed attempt re-reports it) instead of duplicating it.
 * Returns the points that are new at the end, for `Plotly.extendTraces`.
 */
export function appendPoints(series: ChartSeries, incoming: Point[]): { series: ChartSeries; appended: Point[]; rewritten: boolean } {
  const points = [...series.points];
  const appended: Point[] = [];
  let rewritten = false;
  for (const point of [...incoming].sort((a, b) => a.step - b.step)) {
    const last = points[points.length - 1];
    if (!last || point.step > last.step) {
      points.push(point);
      appended.push(point);
      continue;
    }
    const at = points.findIndex((p) => p.step >= point.step);
    if (points[at]?.step === point.step) points[at] = point;
    else points.splice(at, 0, point);
    rewritten = true;
  }
  return { series: { ...series, points }, appended, rewritten };
}

/**
 * Merges a finer window (fetched for a zoomed step range) into a coarser series: the
 * window's points replace everything the coarse series had inside the window.
 */
export function mergeWindow(coarse: ChartSeries, window: ChartSeries): ChartSeries {
  const first = window.points[0];
  const last = window.points[window.points.length - 1];
  if (!first || !last) return coarse;
  const before = coarse.points.filter((p) => p.step < first.step);
  const after = coarse.points.filter((p) => p.step > last.step);
  return { ...coarse, points: [...before, ...window.points, ...after], downsampled: coarse.downsampled || window.downsampled };
}

/**
 * The min/max band of a downsampled series: the server sends each bucket's lowest and
 * highest point and names its bucket grid, so the points are grouped exactly as the
 * server picked them (live points appended later fall into buckets of the same grid).
 */
export function minMaxBand(series: ChartSeries): Band {
  const band: Band = { steps: [], times: [], lo: [], hi: [] };
  const grid = series.buckets;
  if (!series.downsampled || !grid || grid.width < 1) return band;
  let group: (Point & { value: number })[] = [];
  let groupIndex = Number.NaN;
  const flush = () => {
    if (!group.length) return;
    const values = group.map((p) => p.value);
    band.steps.push(group.reduce((sum, p) => sum + p.step, 0) / group.length);
    const timed = group.every((p) => p.time !== undefined);
    band.times.push(timed ? group.reduce((sum, p) => sum + (p.time ?? 0), 0) / group.length : null);
    band.lo.push(Math.min(...values));
    band.hi.push(Math.max(...values));
  };
  for (const point of series.points) {
    if (point.value === null || !Number.isFinite(point.value)) continue;
    const index = Math.floor((point.step - grid.origin) / grid.width);
    if (index !== groupIndex) {
      flush();
      group = [];
      groupIndex = index;
    }
    group.push(point as Point & { value: number });
  }
  flush();
  return band;
}

/** Live points of one run as they arrived (the trainer's records), kept per key. */
export type LiveTail = { run: number; points: Point[] };

/**
 * A freshly fetched series list for one key, with the live points that arrived past the
 * fetched data's last step (while the request was out, or before it was made). A run
 * with nothing fetched gets its live points from `firstStep` on.
 */
export function withLiveTail(key: string, fetched: ChartSeries[], live: LiveTail[], firstStep: number): ChartSeries[] {
  const merged = fetched.map((s) => {
    const lastStep = s.points[s.points.length - 1]?.step ?? firstStep - 1;
    const tail = live.find((l) => l.run === s.run)?.points.filter((p) => p.step > lastStep) ?? [];
    return tail.length ? appendPoints(s, tail).series : s;
  });
  for (const l of live) {
    if (fetched.some((s) => s.run === l.run)) continue;
    const points = l.points.filter((p) => p.step >= firstStep);
    if (points.length) merged.push(appendPoints({ key, run: l.run, points: [], downsampled: false }, points).series);
  }
  return merged;
}

/**
 * Points to ask the server for a chart `width` CSS pixels wide: one min/max bucket per
 * pixel of the plot area (two points each), rounded up so similar widths share a request.
 */
export function pointsForWidth(width: number): number {
  const PLOT_MARGINS = 60; // the plotly layout's left + right margins
  const plot = Math.max(50, Math.round(width) - PLOT_MARGINS);
  return Math.min(5000, Math.ceil((2 * plot + 2) / 100) * 100);
}

/**
 * Exponential moving average with TensorBoard's debiasing (the first points are not
 * pulled toward zero). `weight` 0 returns the raw values; nulls are skipped and stay null.
 */
export function ema(values: (number | null)[], weight: number): (number | null)[] {
  if (weight <= 0) return [...values];
  let last = 0;
  let count = 0;
  return values.map((value) => {
    if (value === null || !Number.isFinite(value)) return null;
    last = last * weight + (1 - weight) * value;
    count += 1;
    return last / (1 - weight ** count);
  });
}

/** Continues an EMA over new values from the state the previous values left. */
export function emaTail(all: (number | null)[], tailLength: number, weight: number): (number | null)[] {
  return ema(all, weight).slice(all.length - tailLength);
}
