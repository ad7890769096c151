/**
 * Bars of precomputed bins (a histogram), drawn by the shared plotly chart. Also used
 * by the datasets pages (prompt lengths).
 */
import type { Data, Layout } from "plotly.js-basic-dist-min";
import { useMemo } from "react";

import { PlotlyChart } from "../../../components/PlotlyChart";
import styles from "./BinsChart.module.css";

export type ChartBin = { start: number; end: number; count: number };

type BinsChartProps = {
  bins: readonly ChartBin[];
  xTitle: string;
  label: string;
  digits?: number;
};

const CONFIG = { displayModeBar: false, responsive: true };

export function BinsChart({ bins, xTitle, label, digits = 2 }: BinsChartProps) {
  const data = useMemo<Data[]>(() => {
    const span = Math.max(...bins.map((b) => b.end)) - Math.min(...bins.map((b) => b.start));
    const fallbackWidth = span > 0 ? span / Math.max(bins.length, 1) : 1;
    return [
      {
        type: "bar",
        x: bins.map((b) => (b.start + b.end) / 2),
        y: bins.map((b) => b.count),
        // A bin of equal values (start == end, e.g. prompts all 14 characters long)
        // still needs a visible width.
        width: bins.map((b) => (b.end - b.start || fallbackWidth) * 0.92),
        text: bins.map((b) => `${b.start.toFixed(digits)}–${b.end.toFixed(digits)}: ${b.count}`),
        hoverinfo: "text",
        textposition: "none",
        marker: { color: "#4f46e5" },
      },
    ];
  }, [bins, digits]);
  const layout = useMemo<Partial<Layout>>(
    () => ({
      height: 220,
      margin: { l: 40, r: 10, t: 10, b: 40 },
      xaxis: { title: { text: xTitle } },
      yaxis: { title: { text: "rows" }, rangemode: "tozero" },
      bargap: 0,
      paper_bgcolor: "rgba(0,0,0,0)",
      plot_bgcolor: "rgba(0,0,0,0)",
    }),
    [xTitle],
  );
  const total = bins.reduce((sum, b) => sum + b.count, 0);
  return (
    <figure className={styles.figure} aria-label={label}>
      <PlotlyChart data={data} layout={layout} config={CONFIG} className={styles.chart} testId="bins-chart" />
      <figcaption className={styles.caption}>
        {label}: {total} {total === 1 ? "row" : "rows"} in {bins.length} bins
      </figcaption>
    </figure>
  );
}
