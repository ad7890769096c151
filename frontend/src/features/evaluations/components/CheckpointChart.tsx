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

/** A metric across a run's checkpoints (by training step), the base model as a dashed line. */
export function CheckpointChart({ title, points, baseline }: Props) {
  if (points.length === 0) {
    return <p className={styles.muted}>No checkpoint has results yet; the chart appears as they arrive.</p>;
  }
  const values = [...points.map((p) => p.value), ...(baseline ? [baseline.value] : [])];
  let low = Math.min(...values);
  let high = Math.max(...values);
  if (high - low < 1e-9) [low, high] = [low - 0.5, high + 0.5];
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
        <text x={4} y={y(high) + 4} className={styles.tick}>{high.toFixed(2)}</text>
        <text x={4} y={y(low) + 4} className={styles.tick}>{low.toFixed(2)}</text>
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
