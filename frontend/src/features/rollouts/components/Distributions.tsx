import type { Data, Layout } from "plotly.js-basic-dist-min";
import { useMemo } from "react";

import { PlotlyChart } from "../../../components/PlotlyChart";
import { layoutClass } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import { useHistogram, useLengths } from "../../samples/hooks";
import review from "./review.module.css";

type Props = {
  run: number;
  stepMin: number | null;
  stepMax: number | null;
  /** False while the list's first page for the filters is loading: a new range waits. */
  ready: boolean;
  onPickScores: (low: number, high: number) => void;
  onPickSample: (id: number) => void;
};

/** Room for the axis titles. */
const MARGIN = { t: 24, r: 12, b: 40, l: 48 };

const HISTOGRAM_LAYOUT: Partial<Layout> = {
  margin: MARGIN,
  xaxis: { title: { text: "score" } },
  yaxis: { title: { text: "samples" } },
  bargap: 0.05,
};
const SCATTER_LAYOUT: Partial<Layout> = {
  margin: MARGIN,
  xaxis: { title: { text: "response length (tokens)" } },
  yaxis: { title: { text: "score" } },
  showlegend: true,
  legend: { orientation: "h", y: 1.15 },
};

/** Score histogram (click a bin to filter by it) and length vs score (click a point to open it). */
export function Distributions({ run, stepMin, stepMax, ready, onPickScores, onPickSample }: Props) {
  const steps = useMemo(
    () => ({
      ...(stepMin !== null ? { step_min: stepMin } : {}),
      ...(stepMax !== null ? { step_max: stepMax } : {}),
    }),
    [stepMin, stepMax],
  );
  const histogram = useHistogram(run, steps, ready);
  const lengths = useLengths(run, steps, ready);
  const bins = histogram.data?.bins;
  const points = lengths.data?.points;

  const histogramData = useMemo<Data[]>(
    () =>
      bins
        ? [
            {
              type: "bar",
              x: bins.map((b) => (b.low + b.high) / 2),
              y: bins.map((b) => b.count),
              width: bins.map((b) => Math.max(b.high - b.low, 1e-6) * 0.95),
              customdata: bins.map((b) => [b.low, b.high]) as unknown as number[],
              hovertemplate: "%{customdata[0]:.3f} to %{customdata[1]:.3f}: %{y} samples<extra></extra>",
              marker: { color: "#4f46e5" },
            },
          ]
        : [],
    [bins],
  );
  const scatterData = useMemo<Data[]>(() => {
    if (!points) return [];
    const trace = (truncated: boolean): Data => {
      const chosen = points.filter((p) => p.truncated === truncated);
      return {
        type: "scatter",
        mode: "markers",
        name: truncated ? "truncated (hit the length limit)" : "finished",
        x: chosen.map((p) => p.response_length),
        y: chosen.map((p) => p.score),
        customdata: chosen.map((p) => p.sample),
        hovertemplate: "sample %{customdata}: %{x} tokens, score %{y}<extra></extra>",
        marker: truncated
          ? { color: "#f79009", symbol: "x", size: 8 }
          : { color: "#4f46e5", opacity: 0.6, size: 6 },
      };
    };
    return [trace(false), trace(true)];
  }, [points]);

  return (
    <section className={layoutClass.columns} aria-label="Distributions">
      <div className={ui.card}>
        <h2 className={review.sectionTitle}>Scores (click a bar to filter)</h2>
        {histogram.error ? <Notice tone="error">{histogram.error.message}</Notice> : null}
        {bins && bins.length === 0 ? <p className={review.status}>No scores in these steps.</p> : null}
        {bins && bins.length > 0 ? (
          <PlotlyChart
            data={histogramData}
            layout={HISTOGRAM_LAYOUT}
            label="Score histogram"
            className={review.chart}
            events={{
              click: (event) => {
                const index = event.points[0]?.pointIndex;
                const bin = index !== undefined ? bins[index] : undefined;
                if (bin) onPickScores(bin.low, bin.high);
              },
            }}
          />
        ) : null}
        {!bins && !histogram.error ? <p className={review.status}>Loading scores…</p> : null}
      </div>
      <div className={ui.card}>
        <h2 className={review.sectionTitle}>Response length vs score (click a point to open it)</h2>
        {lengths.error ? <Notice tone="error">{lengths.error.message}</Notice> : null}
        {points && points.length === 0 ? <p className={review.status}>No samples in these steps.</p> : null}
        {points && points.length > 0 ? (
          <PlotlyChart
            data={scatterData}
            layout={SCATTER_LAYOUT}
            label="Response length vs score"
            className={review.chart}
            events={{
              click: (event) => {
                const id = event.points[0]?.customdata;
                if (typeof id === "number") onPickSample(id);
              },
            }}
          />
        ) : null}
        {!points && !lengths.error ? <p className={review.status}>Loading lengths…</p> : null}
      </div>
    </section>
  );
}
