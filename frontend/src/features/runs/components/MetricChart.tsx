import { useEffect, useRef, useState } from "react";

import { ErrorState } from "../../../components/ErrorState";
import { Skeleton } from "../../../components/Spinner";
import { loadPlotly, type Plotly } from "../../../lib/plotly";
import { ema, emaTail, minMaxBand, type ChartSeries, type Point } from "../chartData";

export const CHART_HEIGHT = 240;
const COLORS = ["#4f46e5", "#e11d48", "#059669", "#d97706", "#0891b2", "#7c3aed", "#db2777", "#65a30d"];
const BAND_BUCKETS = 500;

export type ChartSettings = { smoothing: number; logY: boolean };

/** What the grid calls on a mounted chart: live points arrive without a redraw. */
export type ChartHandle = {
  append: (run: number, points: Point[], allValues: (number | null)[]) => void;
  hover: (step: number | null) => void;
};

type MetricChartProps = {
  metric: string;
  series: ChartSeries[];
  runLabel: (run: number) => string;
  settings: ChartSettings;
  onPointClick?: (run: number, step: number) => void;
  onHover?: (step: number | null) => void;
  register: (metric: string, handle: ChartHandle | null) => void;
};

function traces(series: ChartSeries[], runLabel: (run: number) => string, settings: ChartSettings) {
  const data: Record<string, unknown>[] = [];
  const rawIndex = new Map<number, number>();
  series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const steps = s.points.map((p) => p.step);
    const values = s.points.map((p) => p.value);
    const band = minMaxBand(s, BAND_BUCKETS);
    const bucketed = band.steps.length > 0 && band.steps.length < s.points.length;
    if (bucketed) {
      data.push({ x: band.steps, y: band.lo, mode: "lines", line: { width: 0, color }, hoverinfo: "skip", showlegend: false, name: `${runLabel(s.run)} min` });
      data.push({ x: band.steps, y: band.hi, mode: "lines", line: { width: 0, color }, fill: "tonexty", fillcolor: `${color}22`, hoverinfo: "skip", showlegend: false, name: `${runLabel(s.run)} max` });
    }
    rawIndex.set(s.run, data.length);
    data.push({ x: steps, y: values, mode: "lines", line: { width: 1, color }, opacity: settings.smoothing > 0 ? 0.25 : 1, name: `${runLabel(s.run)} raw`, showlegend: false, hoverinfo: "skip" });
    data.push({ x: steps, y: ema(values, settings.smoothing), mode: "lines", line: { width: 2, color }, name: runLabel(s.run), showlegend: series.length > 1 });
  });
  return { data, rawIndex };
}

/** One metric's plotly chart: built once, extended live, restyled on settings changes. */
export function MetricChart({ metric, series, runLabel, settings, onPointClick, onHover, register }: MetricChartProps) {
  const div = useRef<HTMLDivElement>(null);
  const plotly = useRef<Plotly | null>(null);
  const rawIndex = useRef(new Map<number, number>());
  const [error, setError] = useState<unknown>(null);
  const [ready, setReady] = useState(false);
  const latest = useRef({ series, settings, onPointClick, onHover, runLabel });
  latest.current = { series, settings, onPointClick, onHover, runLabel };

  // Build the chart once; later data arrives through `append`, settings through `react`.
  useEffect(() => {
    let cancelled = false;
    const element = div.current;
    loadPlotly()
      .then(async (P) => {
        if (cancelled || !element) return;
        plotly.current = P;
        const { series: s, settings: st, runLabel: label } = latest.current;
        const built = traces(s, label, st);
        rawIndex.current = built.rawIndex;
        await P.newPlot(element, built.data as never, layout(metric, st), { displaylogo: false, responsive: true });
        countPoints(element, s);
        const events = element as unknown as { on: (name: string, fn: (e: { points?: { x: number; curveNumber: number }[]; xvals?: number[] }) => void) => void };
        events.on("plotly_click", (e) => {
          const point = e.points?.[0];
          if (!point) return;
          const run = [...rawIndex.current.entries()].find(([, idx]) => point.curveNumber === idx || point.curveNumber === idx + 1)?.[0];
          if (run !== undefined) latest.current.onPointClick?.(run, Math.round(point.x));
        });
        events.on("plotly_hover", (e) => {
          const x = e.points?.[0]?.x;
          if (typeof x === "number") latest.current.onHover?.(x);
        });
        events.on("plotly_unhover", () => latest.current.onHover?.(null));
        setReady(true);
      })
      .catch((e: unknown) => !cancelled && setError(e));
    return () => {
      cancelled = true;
      if (element && plotly.current) plotly.current.purge(element);
    };
  }, [metric]);

  // Settings or a new data set (a new step range): one `react` call, same chart.
  useEffect(() => {
    const P = plotly.current;
    if (!ready || !P || !div.current) return;
    const built = traces(series, runLabel, settings);
    rawIndex.current = built.rawIndex;
    void P.react(div.current, built.data as never, layout(metric, settings));
    countPoints(div.current, series);
  }, [ready, series, settings, metric, runLabel]);

  useEffect(() => {
    if (!ready) return undefined;
    register(metric, {
      append: (run, points, allValues) => {
        const P = plotly.current;
        const index = rawIndex.current.get(run);
        if (!P || !div.current || index === undefined || !points.length) return;
        const x = points.map((p) => p.step);
        const smooth = emaTail(allValues, points.length, latest.current.settings.smoothing);
        void P.extendTraces(div.current, { x: [x, x], y: [points.map((p) => p.value), smooth] } as never, [index, index + 1]);
        div.current.dataset.points = String(Number(div.current.dataset.points ?? 0) + points.length);
        div.current.dataset.livePoints = String(Number(div.current.dataset.livePoints ?? 0) + points.length);
      },
      hover: (step) => {
        const P = plotly.current as unknown as { Fx?: { hover: (el: HTMLElement, data: unknown) => void; unhover: (el: HTMLElement) => void } };
        if (!div.current || !P?.Fx) return;
        if (step === null) P.Fx.unhover(div.current);
        else P.Fx.hover(div.current, { xval: step });
      },
    });
    return () => register(metric, null);
  }, [ready, metric, register]);

  if (error) return <ErrorState title={`Could not draw ${metric}`} error={error} />;
  return (
    <figure style={{ margin: 0 }} aria-label={`Chart of ${metric}`} data-metric={metric} data-ready={ready}>
      {!ready ? <Skeleton height={CHART_HEIGHT} /> : null}
      <div ref={div} style={{ height: ready ? CHART_HEIGHT : 0 }} />
    </figure>
  );
}

/** How many points the chart shows, as a data attribute (for tests and the bench). */
function countPoints(element: HTMLElement, series: ChartSeries[]) {
  element.dataset.points = String(series.reduce((sum, s) => sum + s.points.length, 0));
}

function layout(metric: string, settings: ChartSettings) {
  return {
    title: { text: metric, font: { size: 13 }, x: 0.02 },
    height: CHART_HEIGHT,
    margin: { l: 48, r: 12, t: 32, b: 32 },
    xaxis: { title: { text: "step" }, automargin: true },
    yaxis: { type: settings.logY ? "log" : "linear", automargin: true },
    hovermode: "x",
    showlegend: true,
    legend: { orientation: "h", y: -0.25 },
    paper_bgcolor: "rgba(0,0,0,0)",
    plot_bgcolor: "rgba(0,0,0,0)",
  } as never;
}
