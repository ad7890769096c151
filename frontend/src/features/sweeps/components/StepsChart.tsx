import { useMemo } from "react";

import { PlotlyChart } from "../../../components/PlotlyChart";
import ui from "../../../components/ui.module.css";
import { legendRoom } from "../../runs/lib/chartLegend";
import styles from "../sweeps.module.css";
import { stepTraces } from "../lib/charts";
import type { Trial } from "../lib/types";

const CHART_HEIGHT = 300;
/** More trials than this: no legend (hovering a line names its trial). */
const MAX_LEGEND = 16;

type Props = { trials: readonly Trial[]; metricLabel: string; bestNumber: number | null };

/** The metric across steps for every trial on one chart; a pruned trial ends in an ✕ where it stopped. */
export function StepsChart({ trials, metricLabel, bestNumber }: Props) {
  const data = useMemo(() => stepTraces(trials, bestNumber) as never[], [trials, bestNumber]);
  const layout = useMemo(() => {
    const names = (data as { name: string }[]).map((t) => t.name);
    const lastStep = Math.max(0, ...trials.flatMap((t) => t.intermediate.map(([step]) => step)));
    // The legend sits under the axis, in the room it needs at the chart's width (legendRoom).
    return (element: HTMLDivElement) => {
      const room = names.length > MAX_LEGEND ? 0 : legendRoom(names, element.clientWidth);
      return {
        height: CHART_HEIGHT + room,
        margin: { l: 56, r: 16, t: 8, b: 44 + room },
        // Steps are whole: a short sweep's axis ticks every step, never at 1.5.
        xaxis: { title: { text: "step" }, zeroline: false, ...(lastStep <= 12 ? { dtick: 1 } : { tickformat: "d" }) },
        yaxis: { title: { text: metricLabel }, zeroline: false },
        legend: { orientation: "h" as const, x: 0, y: 0, yanchor: "bottom" as const, yref: "container" as const },
        showlegend: room > 0,
        hovermode: "closest" as const,
      };
    };
  }, [data, trials, metricLabel]);
  const reported = trials.some((t) => t.intermediate.length > 0);
  return (
    <section className={styles.card} aria-label="Metric across steps" data-testid="steps-chart">
      <h2 className={styles.cardTitle}>
        The metric across steps
        <span className={styles.cardNote}>{metricLabel} of every trial; ✕ where a pruned trial stopped</span>
      </h2>
      {reported ? (
        <PlotlyChart data={data} layout={layout} className={styles.steps} label={`${metricLabel} across steps, one line per trial`} testId="steps-plot" />
      ) : (
        <p className={ui.muted}>Lines appear as trials report {metricLabel}.</p>
      )}
    </section>
  );
}
