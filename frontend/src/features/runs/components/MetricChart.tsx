import { useCallback, useEffect, useMemo, useRef, useState } from "react";

import { ErrorState } from "../../../components/ErrorState";
import { PlotlyChart, type PlotEvents } from "../../../components/PlotlyChart";
import { Skeleton } from "../../../components/Spinner";
import type { Plotly } from "../../../lib/plotly";
import { ema, emaTail, minMaxBand, xOf, type ChartSeries, type Point, type XAxis } from "../lib/chartData";
import { legendRoom } from "../lib/chartLegend";

export const CHART_HEIGHT = 240;
const COLORS = ["#4f46e5", "#e11d48", "#059669", "#d97706", "#0891b2", "#7c3aed", "#db2777", "#65a30d"];

export type ChartSettings = { smoothing: number; logY: boolean; axis: XAxis };
/** A metric's spread drawn as a band around it: the series of its lowest and highest keys. */
export type Spread = { lo: ChartSeries[]; hi: ChartSeries[] };

/** What the grid calls on a mounted chart: live points arrive without a redraw. */
export type ChartHandle = {
  append: (run: number, points: Point[], allValues: (number | null)[]) => void;
  /** `x`: a value on this grid's x axis (a step, or epoch ms on the time axis). */
  hover: (x: number | null) => void;
};

type MetricChartProps = {
  metric: string;
  /** The chart's title; the metric key when not given. */
  title?: string;
  series: ChartSeries[];
  spread?: Spread;
  runLabel: (run: number) => string;
  settings: ChartSettings;
  onPointClick?: (run: number, step: number) => void;
  onHover?: (x: number | null) => void;
  register: (metric: string, handle: ChartHandle | null) => void;
};

function traces(series: ChartSeries[], runLabel: (run: number) => string, settings: ChartSettings, spread?: Spread) {
  const data: Record<string, unknown>[] = [];
  const rawIndex = new Map<number, number>();
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const steps = s.points.map((p) => p.step);
    const x = s.points.map((p) => xOf(p, settings.axis));
    const values = s.points.map((p) => p.value);
    // A series of one point is drawn as a marker: a line of one point shows nothing.
    const few = s.points.length < 2;
    const band = minMaxBand(s);
    const bucketed = band.steps.length > 0 && band.steps.length < s.points.length;
    const lo = spread?.lo.find((b) => b.run === s.run);
    const hi = spread?.hi.find((b) => b.run === s.run);
    if (lo && hi) {
      // The metric's own spread (e.g. the lowest and highest reward of each step).
      const side = (b: ChartSeries, name: string, fill: boolean) => ({
        x: b.points.map((p) => xOf(p, settings.axis)),
        y: b.points.map((p) => p.value),
        mode: few ? "markers" : "lines",
        marker: { symbol: "line-ew-open", size: 10, color },
        line: { width: 0, color },
        ...(fill && !few ? { fill: "tonexty", fillcolor: `${color}22` } : {}),
        hoverinfo: "skip",
        showlegend: false,
        name: `${runLabel(s.run)} ${name}`,
      });
      data.push(side(lo, "min", false), side(hi, "max", true));
    } else if (bucketed) {
      const bandX = band.steps.map((step, j) => xOf({ step, time: band.times[j] }, settings.axis));
      data.push({ x: bandX, y: band.lo, mode: "lines", line: { width: 0, color }, hoverinfo: "skip", showlegend: false, name: `${runLabel(s.run)} min` });
      data.push({ x: bandX, y: band.hi, mode: "lines", line: { width: 0, color }, fill: "tonexty", fillcolor: `${color}22`, hoverinfo: "skip", showlegend: false, name: `${runLabel(s.run)} max` });
    }
    rawIndex.set(s.run, data.length);
    // The step rides along as customdata: a click opens that step on either axis.
    data.push({ x, y: values, customdata: steps, mode: "lines", line: { width: 1, color }, opacity: settings.smoothing > 0 ? 0.25 : 1, name: `${runLabel(s.run)} raw`, showlegend: false, hoverinfo: "skip" });
    data.push({ x, y: ema(values, settings.smoothing), customdata: steps, mode: few ? "lines+markers" : "lines", marker: { size: 7, color }, line: { width: 2, color }, name: runLabel(s.run), showlegend: series.length > 1 });
  });
  return { data, rawIndex };
}

/**
 * Charts are built one per task, in mount order (top of the page first): the first chart
 * appears as soon as it can, and the page keeps answering input between two builds.
 */
let buildQueue: Promise<unknown> = Promise.resolve();
function inTurn<T>(build: () => Promise<T>): Promise<T> {
  const turn = buildQueue.then(() => new Promise((resolve) => setTimeout(resolve, 0))).then(build);
  buildQueue = turn.catch(() => undefined);
  return turn;
}

const CONFIG = { displaylogo: false, responsive: true };

type PlotPoint = { x: number | string; customdata?: unknown; curveNumber: number };

/** One metric's plotly chart: built once, extended live, restyled on settings changes. */
export function MetricChart({ metric, title, series, spread, runLabel, settings, onPointClick, onHover, register }: MetricChartProps) {
  const element = useRef<HTMLDivElement | null>(null);
  const plotly = useRef<Plotly | null>(null);
  const rawIndex = useRef(new Map<number, number>());
  const [ready, setReady] = useState(false);
  const latest = useRef({ title, series, settings, onPointClick, onHover, runLabel });
  latest.current = { title, series, settings, onPointClick, onHover, runLabel };
  // Drawn again only for new series, spread or settings, or when the series holds points
  // the chart lacks (live points that reached it before `append` was registered): a new
  // title or run label alone draws nothing.
  const [redraws, setRedraws] = useState(0);
  const built = useMemo(() => traces(series, latest.current.runLabel, settings, spread), [series, spread, settings, redraws]); // eslint-disable-line react-hooks/exhaustive-deps
  const shape = useCallback(
    (div: HTMLDivElement) => layout(latest.current.title ?? metric, settings, legendRoom(series.map((x) => latest.current.runLabel(x.run)), div.clientWidth)),
    [metric, settings, series, redraws], // eslint-disable-line react-hooks/exhaustive-deps
  );
  // The points the chart shows (drawn, then appended live); a redraw asked for and not yet done.
  const shown = useRef<{ series: ChartSeries[] | null; points: number; pending: boolean }>({ series: null, points: 0, pending: false });
  useEffect(() => {
    const was = shown.current;
    // A new series is drawn anyway; the same one with more points than shown needs a redraw.
    if (!ready || was.pending || was.series !== series || pointCount(series) === was.points) return;
    was.pending = true;
    setRedraws((n) => n + 1);
  }, [ready, series]);
  const drawn = useRef(built);
  drawn.current = built;
  const onDrawn = useCallback((div: HTMLDivElement, P: Plotly) => {
    element.current = div;
    plotly.current = P;
    rawIndex.current = drawn.current.rawIndex;
    shown.current = { series: latest.current.series, points: pointCount(latest.current.series), pending: false };
    countPoints(div, latest.current.series, latest.current.settings.axis);
    setReady(true);
  }, []);
  const events = useMemo<PlotEvents>(
    () => ({
      click: (e) => {
        const point = e.points?.[0] as PlotPoint | undefined;
        if (!point) return;
        const run = [...rawIndex.current.entries()].find(([, idx]) => point.curveNumber === idx || point.curveNumber === idx + 1)?.[0];
        if (run !== undefined && typeof point.customdata === "number") latest.current.onPointClick?.(run, point.customdata);
      },
      hover: (e) => {
        const x = (e.points?.[0] as PlotPoint | undefined)?.x;
        // A date axis reports x as plotly's UTC date string; the other charts want ms.
        if (typeof x === "number") latest.current.onHover?.(x);
        else if (typeof x === "string") latest.current.onHover?.(Date.parse(`${x.replace(" ", "T")}Z`));
      },
      unhover: () => latest.current.onHover?.(null),
    }),
    [],
  );

  useEffect(() => {
    if (!ready) return undefined;
    register(metric, {
      append: (run, points, allValues) => {
        const P = plotly.current;
        const div = element.current;
        const index = rawIndex.current.get(run);
        if (!P || !div || index === undefined || !points.length) return;
        const { axis, smoothing } = latest.current.settings;
        const x = points.map((p) => xOf(p, axis));
        const steps = points.map((p) => p.step);
        const smooth = emaTail(allValues, points.length, smoothing);
        const update = { x: [x, x], y: [points.map((p) => p.value), smooth], customdata: [steps, steps] };
        void P.extendTraces(div, update as never, [index, index + 1]);
        shown.current.points += points.length;
        div.dataset.points = String(Number(div.dataset.points ?? 0) + points.length);
        div.dataset.livePoints = String(Number(div.dataset.livePoints ?? 0) + points.length);
      },
      hover: (x) => {
        const P = plotly.current as unknown as { Fx?: { hover: (el: HTMLElement, data: unknown) => void; unhover: (el: HTMLElement) => void } };
        const div = element.current;
        if (!div || !P?.Fx) return;
        if (x === null) P.Fx.unhover(div);
        else P.Fx.hover(div, { xval: x });
      },
    });
    return () => register(metric, null);
  }, [ready, metric, register]);

  return (
    <figure style={{ margin: 0 }} aria-label={`Chart of ${metric}`} data-metric={metric} data-ready={ready} data-axis={settings.axis}>
      {!ready ? <Skeleton height={CHART_HEIGHT} /> : null}
      {/* Once drawn, as tall as plotly's layout (a legend of several runs adds room). */}
      <PlotlyChart
        data={built.data as never}
        layout={shape}
        config={CONFIG}
        events={events}
        schedule={inTurn}
        onDrawn={onDrawn}
        fallback={(error) => <ErrorState title={`Could not draw ${metric}`} error={error} />}
        style={{ height: ready ? undefined : 0 }}
      />
    </figure>
  );
}

/** What a chart's slot shows while its data is on the way (counted as a chart not yet drawn). */
export function ChartPlaceholder({ metric }: { metric: string }) {
  return (
    <figure style={{ margin: 0 }} aria-label={`Chart of ${metric}`} aria-busy="true" data-metric={metric} data-ready={false}>
      <Skeleton height={CHART_HEIGHT} />
    </figure>
  );
}

function pointCount(series: ChartSeries[]): number {
  return series.reduce((sum, s) => sum + s.points.length, 0);
}

/** How many points the chart shows (those with an x on its axis), as a data attribute (for tests and the bench). */
function countPoints(element: HTMLElement, series: ChartSeries[], axis: XAxis) {
  element.dataset.points = String(series.reduce((sum, s) => sum + s.points.filter((p) => xOf(p, axis) !== null).length, 0));
}

/** `legend`: px under the axis for the legend of several runs (`legendRoom`). */
function layout(title: string, settings: ChartSettings, legend: number) {
  return {
    title: { text: title, font: { size: 13 }, x: 0.02 },
    height: CHART_HEIGHT + legend,
    // Room below for the step axis's ticks and title: a margin plotly must widen itself
    // (automargin) costs a second layout pass, about half of a chart's first draw. Date
    // ticks may take two lines, so the time axis still widens it when it must.
    margin: { l: 48, r: 12, t: 32, b: 48 + legend },
    xaxis:
      settings.axis === "time"
        ? { title: { text: "wall time (UTC)" }, type: "date", automargin: true }
        : { title: { text: "step" }, type: "linear", automargin: false },
    yaxis: { type: settings.logY ? "log" : "linear", automargin: true },
    hovermode: "x",
    showlegend: true,
    // At the chart's bottom (the container's, not the plot's), in the room the margin
    // keeps for it below the axis title: the two never overlap.
    legend: { orientation: "h", x: 0, xanchor: "left", yref: "container", y: 0, yanchor: "bottom" },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
  } as never;
}
