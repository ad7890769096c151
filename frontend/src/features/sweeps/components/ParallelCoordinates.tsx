import { useMemo, useState } from "react";

import { PlotlyChart } from "../../../components/PlotlyChart";
import ui from "../../../components/ui.module.css";
import { loadPlotlyGl } from "../../../lib/plotly";
import styles from "../sweeps.module.css";
import { parcoordsData, parcoordsTrace } from "../lib/charts";
import { formatParam } from "../lib/trials";
import type { Direction, Param, ParamValue, Trial } from "../lib/types";

/** Whether this browser draws WebGL (parcoords needs it; a browser without a GPU or a software renderer has none). */
export function canDrawWebgl(): boolean {
  try {
    const canvas = document.createElement("canvas");
    return Boolean(canvas.getContext("webgl") ?? canvas.getContext("experimental-webgl"));
  } catch {
    return false;
  }
}

const LAYOUT = { margin: { l: 60, r: 40, t: 70, b: 24 }, font: { size: 11 } };

const inputLabel = (param: Param, value: ParamValue) => (param.type === "input" ? `#${String(value)}` : formatParam(value));

type Props = { space: Param[]; trials: readonly Trial[]; metricLabel: string; direction: Direction };

/** Each trial with a value as a line through its parameters to its metric (the last axis); drag along an axis to filter. */
export function ParallelCoordinates({ space, trials, metricLabel, direction }: Props) {
  const [webgl] = useState(canDrawWebgl);
  const data = useMemo(() => parcoordsData(space, trials, metricLabel, inputLabel), [space, trials, metricLabel]);
  const traces = useMemo(() => [parcoordsTrace(data, direction)] as never[], [data, direction]);
  const scored = data.trials.length;
  return (
    <section className={styles.card} aria-label="Parameters against the metric" data-testid="parallel-coordinates">
      <h2 className={styles.cardTitle}>
        Parameters against {metricLabel}
        <span className={styles.cardNote}>one line per trial with a value ({scored}); drag along an axis to pick a range</span>
      </h2>
      {scored < 2 ? (
        <p className={ui.muted}>Drawn once two trials have a value.</p>
      ) : !webgl ? (
        <Fallback reason="This browser cannot draw WebGL, which the parallel coordinates chart needs." />
      ) : (
        <div className={styles.chartScroll}>
          <PlotlyChart
            data={traces}
            layout={LAYOUT}
            load={loadPlotlyGl}
            className={styles.parcoords}
            label={`Parallel coordinates of ${space.map((p) => p.name).join(", ")} against ${metricLabel}`}
            testId="parcoords-chart"
            fallback={(error) => <Fallback reason={`The chart could not be drawn: ${error instanceof Error ? error.message : String(error)}`} />}
          />
        </div>
      )}
    </section>
  );
}

function Fallback({ reason }: { reason: string }) {
  return (
    <p className={styles.fallback} role="note" data-testid="parcoords-fallback">
      {reason} The trials table below has every trial&apos;s parameters and value; sort it by the metric to compare them.
    </p>
  );
}
