import { useMemo } from "react";

import { ErrorState } from "../../../components/ErrorState";
import type { StepRange } from "../../metrics/api";
import { useSeries } from "../../metrics/hooks";
import { fromApi, pointsForWidth, type ChartSeries, type XAxis } from "../lib/chartData";
import { ChartPlaceholder, MetricChart, type ChartHandle, type ChartSettings, type Spread } from "./MetricChart";

/** Where a chart's data lives once fetched, with the live points that arrive after. */
export type SeriesStore = {
  /** The fetched series merged with the live points held for `key`: what the chart draws. */
  adopt: (key: string, fetched: ChartSeries[]) => ChartSeries[];
};

type ChartSlotProps = {
  metric: string;
  title?: string;
  /** The keys of the metric's spread (lowest, highest), drawn as a band around it. */
  spread?: [string, string];
  runs: number[];
  range: StepRange;
  axis: XAxis;
  smoothing: number;
  logY: boolean;
  /** The slot's width in CSS pixels: the series is downsampled to about one bucket per pixel. */
  width: number;
  store: SeriesStore;
  runLabel: (run: number) => string;
  onPointClick?: (run: number, step: number) => void;
  onHover?: (x: number | null) => void;
  register: (metric: string, handle: ChartHandle | null) => void;
};

/**
 * One chart of the grid, mounted when scrolled into view: it asks for its own key only
 * (charts that come into view together share one request) at its own pixel width.
 */
export function ChartSlot({ metric, spread, runs, range, axis, smoothing, logY, width, store, ...chart }: ChartSlotProps) {
  const points = pointsForWidth(width);
  const times = axis === "time";
  // The spread's keys ride in the same batched request as the metric (and share its cache).
  const request = { runs, range, times, points };
  const query = useSeries(request, metric, true);
  const fetched = query.data;
  const series = useMemo(() => (fetched ? store.adopt(metric, fetched.map(fromApi)) : null), [fetched, metric, store]);
  const lo = useSeries(request, spread?.[0]);
  const hi = useSeries(request, spread?.[1]);
  const band: Spread | undefined = useMemo(
    () => (lo.data && hi.data ? { lo: lo.data.map(fromApi), hi: hi.data.map(fromApi) } : undefined),
    [lo.data, hi.data],
  );
  // Until the series with times arrive, the previous ones (without) stay on a step axis.
  const shownAxis: XAxis = axis === "time" && query.isPlaceholderData ? "step" : axis;
  const settings: ChartSettings = useMemo(() => ({ smoothing, logY, axis: shownAxis }), [smoothing, logY, shownAxis]);

  if (query.isError && !series) {
    return <ErrorState title={`Could not load ${metric}`} error={query.error} onRetry={() => void query.refetch()} />;
  }
  if (!series) return <ChartPlaceholder metric={metric} />;
  return <MetricChart metric={metric} series={series} spread={band} settings={settings} {...chart} />;
}
