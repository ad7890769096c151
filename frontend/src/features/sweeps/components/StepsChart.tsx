import { useMemo } from "react";

import { PlotlyChart } from "../../../components/PlotlyChart";
import ui from "../../../components/ui.module.css";
import { loadPlotlyGl } from "../../../lib/plotly";
import styles from "../sweeps.module.css";
import { stepTraces } from "../lib/charts";
import type { Trial } from "../lib/types";

type Props = { trials: readonly Trial[]; metricLabel: string; bestNumber: number | null };

/** The metric across steps for every trial on one chart; a pruned trial ends in an ✕ where it stopped. */
export function StepsChart({ trials, metricLabel, bestNumber }: Props) {
  const data = useMemo(() => stepTraces(trials, bestNumber) as never[], [trials, bestNumber]);
  const layout = useMemo(
    () => ({
      margin: { l: 56, r: 16, t: 8, b: 44 },
      xaxis: { title: { text: "step" }, zeroline: false },
      yaxis: { title: { text: metricLabel }, zeroline: false },
      legend: { orientation: "h" as const, y: -0.22 },
      showlegend: true,
      hovermode: "closest" as const,
    }),
    [metricLabel],
  );
  const reported = trials.some((t) => t.intermediate.length > 0);
  return (
    <section className={styles.card} aria-label="Metric across steps" data-testid="steps-chart">
      <h2 className={styles.cardTitle}>
        {metricLabel} across steps
        <span className={styles.cardNote}>every trial; ✕ where a pruned trial stopped</span>
      </h2>
      {reported ? (
        // The sweep page loads the gl2d bundle for its parallel coordinates: its scatter draws these lines too.
        <PlotlyChart data={data} layout={layout} load={loadPlotlyGl} className={styles.chart} label={`${metricLabel} across steps, one line per trial`} testId="steps-plot" />
      ) : (
        <p className={ui.muted}>Lines appear as trials report {metricLabel}.</p>
      )}
    </section>
  );
}
