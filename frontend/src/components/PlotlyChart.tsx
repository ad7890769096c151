/**
 * The app's one plotly chart, with the whole lifecycle in one place: plotly is loaded on
 * demand (lib/plotly.ts, its own chunk), the chart is created on the first draw, updated
 * in place (`Plotly.react`) when its data or layout change, and purged on unmount.
 * Charts are SVG (the basic bundle), so they work where WebGL does not (headless Chromium).
 */
import type { Config, Data, Layout, PlotHoverEvent, PlotMouseEvent } from "plotly.js-basic-dist-min";
import { useEffect, useRef, useState, type CSSProperties } from "react";

import { loadPlotly, type Plotly } from "../lib/plotly";
import styles from "./PlotlyChart.module.css";

export type PlotEvents = {
  click?: (event: PlotMouseEvent) => void;
  hover?: (event: PlotHoverEvent) => void;
  unhover?: () => void;
};

type PlotElement = HTMLDivElement & { on?: (name: string, handler: (event: never) => void) => void };

type PlotlyChartProps = {
  data: Data[];
  /** The layout, or a function of the element (a layout that depends on its width). */
  layout: Partial<Layout> | ((element: HTMLDivElement) => Partial<Layout>);
  config?: Partial<Config>;
  events?: PlotEvents;
  /** Runs the first draw (the run page builds its charts one per task, top first). */
  schedule?: (draw: () => Promise<void>) => Promise<void>;
  /** After each draw, with the element and plotly: for what plotly does in place (extendTraces, hover). */
  onDrawn?: (element: HTMLDivElement, plotly: Plotly) => void;
  /** What to show when plotly fails to load or draw; by default a short message. */
  fallback?: (error: unknown) => React.ReactNode;
  label?: string;
  className?: string;
  style?: CSSProperties;
  testId?: string;
};

const DEFAULT_CONFIG: Partial<Config> = { displaylogo: false, responsive: true, displayModeBar: false };

export function PlotlyChart({ data, layout, config = DEFAULT_CONFIG, events, schedule, onDrawn, fallback, label, className, style, testId }: PlotlyChartProps) {
  const ref = useRef<PlotElement>(null);
  const plotly = useRef<Plotly | null>(null);
  const created = useRef(false);
  const [failed, setFailed] = useState<unknown>(null);
  const latest = useRef({ events, schedule, onDrawn });
  latest.current = { events, schedule, onDrawn };

  useEffect(() => {
    let cancelled = false;
    const element = ref.current;
    const draw = async () => {
      const P = plotly.current;
      if (cancelled || !element || !P) return;
      const shape = typeof layout === "function" ? layout(element) : layout;
      if (created.current) {
        await P.react(element, data, shape, config);
      } else {
        await P.newPlot(element, data, shape, config);
        created.current = true;
        element.on?.("plotly_click", (event: PlotMouseEvent) => latest.current.events?.click?.(event));
        element.on?.("plotly_hover", (event: PlotHoverEvent) => latest.current.events?.hover?.(event));
        element.on?.("plotly_unhover", () => latest.current.events?.unhover?.());
      }
      if (!cancelled) latest.current.onDrawn?.(element, P);
    };
    loadPlotly()
      .then((P) => {
        plotly.current = P;
        const first = !created.current && latest.current.schedule;
        return first ? first(draw) : draw();
      })
      .catch((error: unknown) => {
        if (!cancelled) setFailed(error);
      });
    return () => {
      cancelled = true;
    };
  }, [data, layout, config]);

  useEffect(() => {
    const element = ref.current;
    return () => {
      if (element && created.current) plotly.current?.purge(element);
    };
  }, []);

  if (failed) {
    return fallback ? <>{fallback(failed)}</> : <p className={styles.failed}>The chart could not be drawn: {failed instanceof Error ? failed.message : String(failed)}</p>;
  }
  return <div ref={ref} className={className ?? styles.chart} style={style} role={label ? "img" : undefined} aria-label={label} data-testid={testId} />;
}
