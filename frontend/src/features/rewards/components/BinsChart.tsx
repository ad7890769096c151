/**
 * Bars of precomputed bins (a histogram), drawn by plotly's basic bundle (loaded on
 * first use through lib/plotly). Also used by the datasets pages (prompt lengths).
 */
import { useEffect, useRef, useState } from "react";

import { loadPlotly } from "../../../lib/plotly";

import styles from "./BinsChart.module.css";

export type ChartBin = { start: number; end: number; count: number };

type BinsChartProps = {
  bins: readonly ChartBin[];
  xTitle: string;
  label: string;
  digits?: number;
};

export function BinsChart({ bins, xTitle, label, digits = 2 }: BinsChartProps) {
  const host = useRef<HTMLDivElement>(null);
  const [failed, setFailed] = useState<string | null>(null);

  useEffect(() => {
    let cancelled = false;
    const element = host.current;
    loadPlotly()
      .then((Plotly) => {
        if (cancelled || !element) return;
        const span = Math.max(...bins.map((b) => b.end)) - Math.min(...bins.map((b) => b.start));
        const fallbackWidth = span > 0 ? span / Math.max(bins.length, 1) : 1;
        const data = [
          {
            type: "bar" as const,
            x: bins.map((b) => (b.start + b.end) / 2),
            y: bins.map((b) => b.count),
            // A bin of equal values (start == end, e.g. prompts all 14 characters long)
            // still needs a visible width.
            width: bins.map((b) => (b.end - b.start || fallbackWidth) * 0.92),
            text: bins.map((b) => `${b.start.toFixed(digits)}–${b.end.toFixed(digits)}: ${b.count}`),
            hoverinfo: "text" as const,
            textposition: "none" as const,
            marker: { color: "#4f46e5" },
          },
        ];
        const layout = {
          height: 220,
          margin: { l: 40, r: 10, t: 10, b: 40 },
          xaxis: { title: { text: xTitle } },
          yaxis: { title: { text: "rows" }, rangemode: "tozero" as const },
          bargap: 0,
          paper_bgcolor: "rgba(0,0,0,0)",
          plot_bgcolor: "rgba(0,0,0,0)",
        };
        return Plotly.react(element, data, layout, { displayModeBar: false, responsive: true });
      })
      .catch((error: unknown) => {
        if (!cancelled) setFailed(error instanceof Error ? error.message : String(error));
      });
    return () => {
      cancelled = true;
    };
  }, [bins, xTitle, digits]);

  if (failed) return <p className={styles.failed}>The chart could not be drawn: {failed}</p>;
  const total = bins.reduce((sum, b) => sum + b.count, 0);
  return (
    <figure className={styles.figure} aria-label={label}>
      <div ref={host} className={styles.chart} data-testid="bins-chart" />
      <figcaption className={styles.caption}>
        {label}: {total} {total === 1 ? "row" : "rows"} in {bins.length} bins
      </figcaption>
    </figure>
  );
}
