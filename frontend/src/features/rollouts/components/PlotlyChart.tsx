/**
 * A plotly chart loaded on demand through the app's lazy loader (lib/plotly.ts):
 * the basic bundle (scatter and bar traces) never ships with the app shell. Charts
 * are SVG, so they work where WebGL is unavailable (headless Chromium).
 */
import type { Config, Data, Layout, PlotMouseEvent } from "plotly.js-basic-dist-min";
import { useEffect, useRef, useState } from "react";

import { loadPlotly } from "../../../lib/plotly";
import styles from "../rollouts.module.css";

type PlotElement = HTMLDivElement & {
  on?: (event: "plotly_click", handler: (event: PlotMouseEvent) => void) => void;
  removeAllListeners?: (event: string) => void;
};

type Props = {
  data: Data[];
  layout: Partial<Layout>;
  label: string;
  onClick?: (event: PlotMouseEvent) => void;
};

const CONFIG: Partial<Config> = { displaylogo: false, responsive: true, displayModeBar: false };

export function PlotlyChart({ data, layout, label, onClick }: Props) {
  const ref = useRef<PlotElement>(null);
  const [failed, setFailed] = useState<string | null>(null);
  const clickRef = useRef(onClick);
  clickRef.current = onClick;

  useEffect(() => {
    let cancelled = false;
    loadPlotly()
      .then(async (Plotly) => {
        const element = ref.current;
        if (cancelled || !element) return;
        await Plotly.react(element, data, { margin: { t: 24, r: 12, b: 40, l: 48 }, ...layout }, CONFIG);
        element.removeAllListeners?.("plotly_click");
        element.on?.("plotly_click", (event) => clickRef.current?.(event));
      })
      .catch((cause: unknown) => setFailed(cause instanceof Error ? cause.message : String(cause)));
    return () => {
      cancelled = true;
    };
  }, [data, layout]);

  useEffect(() => {
    const element = ref.current;
    return () => {
      if (element) void loadPlotly().then((Plotly) => Plotly.purge(element));
    };
  }, []);

  if (failed) return <div className={styles.errorBox}>The chart could not load: {failed}</div>;
  return <div ref={ref} className={styles.chart} role="img" aria-label={label} />;
}
