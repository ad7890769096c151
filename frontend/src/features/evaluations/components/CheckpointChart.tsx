import type { CheckpointPoint } from "../lib/results";
import styles from "../evaluations.module.css";

type Props = {
  title: string;
  points: CheckpointPoint[];
  baseline: { label: string; value: number } | null;
};

const W = 560;
const H = 220;
const PAD = { left: 48, right: 16, top: 12, bottom: 32 };

/**
 * The y range to draw `values` in: their span with a tenth of it free above and below (so
 * no point or baseline sits on an axis), a small span around equal values, never below 0
 * for values that are not.
 */
export function yRange(values: number[]): [number, number] {
  const lowest = Math.min(...values);
  const highest = Math.max(...values);
  const span = highest - lowest > 1e-9 ? highest - lowest : Math.max(Math.abs(lowest) * 0.2, 0.1);
  const middle = (lowest + highest) / 2;
  let low = Math.min(lowest - span * 0.1, middle - span / 2);
  const high = Math.max(highest + span * 0.1, middle + span / 2);
  if (lowest >= 0 && low < 0) low = 0;
  return [low, high];
}

/** A metric across a run's checkpoints (by training step), the base model as a dashed line. */
export function CheckpointChart({ title, points, baseline }: Props) {
  if (points.length === 0) {
    return <p className={styles.muted}>No checkpoint has results yet; the chart appears as they arrive.</p>;
  }
  const values = [...points.map((p) => p.value), ...(baseline ? [baseline.value] : [])];
  const [low, high] = yRange(values);
  const ticks = [low, (low + high) / 2, high];
  const digits = high - low < 0.1 ? 3 : 2;
  const first = points[0]!.step;
  const last = points[points.length - 1]!.step;
  const x = (step: number) => PAD.left + (last === first ? 0.5 : (step - first) / (last - first)) * (W - PAD.left - PAD.right);
  const y = (value: number) => PAD.top + (1 - (value - low) / (high - low)) * (H - PAD.top - PAD.bottom);
  const path = points.map((p, i) => `${i ? "L" : "M"}${x(p.step).toFixed(1)},${y(p.value).toFixed(1)}`).join(" ");
  return (
    <figure className={styles.chart}>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-label={title} data-testid="checkpoint-chart">
        <line x1={PAD.left} y1={H - PAD.bottom} x2={W - PAD.right} y2={H - PAD.bottom} className={styles.axis} />
        <line x1={PAD.left} y1={PAD.top} x2={PAD.left} y2={H - PAD.bottom} className={styles.axis} />
        {ticks.map((tick) => (
          <text key={tick} x={PAD.left - 6} y={y(tick) + 4} textAnchor="end" className={styles.tick}>
            {tick.toFixed(digits)}
          </text>
        ))}
        {baseline ? (
          <g data-testid="baseline">
            <line x1={PAD.left} x2={W - PAD.right} y1={y(baseline.value)} y2={y(baseline.value)} className={styles.baseline} />
            <text x={W - PAD.right} y={y(baseline.value) - 4} textAnchor="end" className={styles.tick}>
              {baseline.label} {baseline.value.toFixed(3)}
            </text>
          </g>
        ) : null}
        <path d={path} className={styles.line} />
        {points.map((p) => (
          <g key={p.step}>
            <circle cx={x(p.step)} cy={y(p.value)} r={4} className={styles.point}>
              <title>{`${p.label}: ${p.value.toFixed(3)}`}</title>
            </circle>
            <text x={x(p.step)} y={H - PAD.bottom + 16} textAnchor="middle" className={styles.tick}>
              {p.step}
            </text>
          </g>
        ))}
      </svg>
      <figcaption className={styles.muted}>{title} by checkpoint step{baseline ? `; dashed: ${baseline.label}` : ""}</figcaption>
    </figure>
  );
}
