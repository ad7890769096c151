/**
 * The parameters against the metric as parallel coordinates, in SVG: one axis per
 * parameter and the metric's last, one line per trial with a value, coloured by how good
 * its value is (viridis: yellow is the best). Plotly's `parcoords` would need WebGL and
 * compiles its shaders with `new Function`, which the studio's Content-Security-Policy
 * (script-src 'self', no 'unsafe-eval') refuses: it could only show its "no WebGL" notice.
 */
import { useMemo, useState } from "react";

import ui from "../../../components/ui.module.css";
import styles from "../sweeps.module.css";
import { axisPosition, axisTicks, goodness, parcoordsData, viridis, type Dimension } from "../lib/charts";
import { formatMetric, formatParam } from "../lib/trials";
import type { Direction, Param, ParamValue, Trial } from "../lib/types";

const WIDTH = 900;
const HEIGHT = 340;
const PAD = { left: 56, right: 56, top: 54, bottom: 30 };

const inputLabel = (param: Param, value: ParamValue) => (param.type === "input" ? `#${String(value)}` : formatParam(value));

type Props = { space: Param[]; trials: readonly Trial[]; metricLabel: string; direction: Direction; bestNumber: number | null };

function axisX(index: number, count: number): number {
  return count < 2 ? WIDTH / 2 : PAD.left + (index * (WIDTH - PAD.left - PAD.right)) / (count - 1);
}

function axisY(position: number): number {
  return PAD.top + (1 - position) * (HEIGHT - PAD.top - PAD.bottom);
}

/** Each trial with a value as a line through its parameters to its metric (the last axis); hover a line for its trial. */
export function ParallelCoordinates({ space, trials, metricLabel, direction, bestNumber }: Props) {
  const data = useMemo(() => parcoordsData(space, trials, metricLabel, inputLabel), [space, trials, metricLabel]);
  const [hovered, setHovered] = useState<number | null>(null);
  const { dimensions, color, trials: numbers } = data;
  const lines = numbers.map((number, row) => ({
    number,
    value: color[row] ?? Number.NaN,
    points: dimensions.flatMap((dimension, i) => {
      const position = axisPosition(dimension, dimension.values[row] ?? Number.NaN);
      return position === null ? [] : [`${axisX(i, dimensions.length).toFixed(1)},${axisY(position).toFixed(1)}`];
    }),
  }));
  // The best and the hovered trial are drawn last, over the others.
  const order = [...lines].sort((a, b) => Number(a.number === bestNumber || a.number === hovered) - Number(b.number === bestNumber || b.number === hovered));
  const describe = (row: number) =>
    `#${numbers[row]}: ${space.map((p) => `${p.name} ${inputLabel(p, trials.find((t) => t.number === numbers[row])?.params[p.name] ?? null)}`).join(", ")} → ${metricLabel} ${formatMetric(color[row])}`;
  return (
    <section className={styles.card} aria-label="Parameters against the metric" data-testid="parallel-coordinates">
      <h2 className={styles.cardTitle}>
        Parameters against {metricLabel}
        <span className={styles.cardNote}>one line per trial with a value ({numbers.length}); the brighter, the better</span>
      </h2>
      {numbers.length < 2 ? (
        <p className={ui.muted}>Drawn once two trials have a value.</p>
      ) : (
        <div className={styles.chartScroll}>
          <svg className={styles.parcoords} viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={`Parallel coordinates of ${space.map((p) => p.name).join(", ")} against ${metricLabel}`} data-testid="parcoords-chart">
            <g>
              {order.map((line) => {
                const row = numbers.indexOf(line.number);
                const best = line.number === bestNumber;
                const lit = hovered === null || hovered === line.number;
                return (
                  <polyline
                    key={line.number}
                    points={line.points.join(" ")}
                    fill="none"
                    stroke={viridis(goodness(line.value, color, direction))}
                    strokeWidth={best || hovered === line.number ? 3.5 : 1.8}
                    strokeOpacity={lit ? 0.95 : 0.15}
                    data-trial={line.number}
                    onMouseEnter={() => setHovered(line.number)}
                    onMouseLeave={() => setHovered(null)}
                  >
                    <title>{describe(row)}</title>
                  </polyline>
                );
              })}
            </g>
            {dimensions.map((dimension, i) => (
              <Axis key={dimension.label} dimension={dimension} x={axisX(i, dimensions.length)} labelRow={i % 2} last={i === dimensions.length - 1} />
            ))}
          </svg>
        </div>
      )}
      {numbers.length >= 2 ? (
        <p className={ui.muted} style={{ margin: "4px 0 0", display: "flex", gap: 8, alignItems: "center" }} aria-hidden="true">
          worse
          <span className={styles.scale} />
          better ({direction === "maximize" ? "higher" : "lower"} {metricLabel})
        </p>
      ) : null}
    </section>
  );
}

function Axis({ dimension, x, labelRow, last }: { dimension: Dimension; x: number; labelRow: number; last: boolean }) {
  const anchor = x < WIDTH * 0.1 ? "start" : x > WIDTH * 0.9 ? "end" : "middle";
  return (
    <g className={styles.axis} data-axis={dimension.label}>
      <line x1={x} x2={x} y1={axisY(0)} y2={axisY(1)} />
      {/* Neighbouring labels sit on two rows, so long config paths do not overlap. */}
      <text x={x} y={labelRow === 0 ? 16 : 32} textAnchor={anchor} className={last ? styles.axisMetric : styles.axisLabel}>
        {dimension.label}
      </text>
      {axisTicks(dimension).map((tick) => {
        const position = axisPosition(dimension, tick.value);
        if (position === null) return null;
        return (
          <g key={`${tick.value}`}>
            <line x1={x - 4} x2={x} y1={axisY(position)} y2={axisY(position)} />
            <text x={x - 6} y={axisY(position) + 3.5} textAnchor="end" className={styles.tick}>
              {tick.text}
            </text>
          </g>
        );
      })}
    </g>
  );
}
