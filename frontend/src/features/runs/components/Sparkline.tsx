/** A tiny inline SVG line of a run's reward (no plotly: the runs list stays light). */
export function Sparkline({ values, label }: { values: (number | null)[]; label: string }) {
  const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
  if (finite.length < 2) return <span aria-label={`${label}: not enough points`}>—</span>;
  const width = 96;
  const height = 24;
  const min = Math.min(...finite);
  const max = Math.max(...finite);
  const span = max - min || 1;
  const points = finite
    .map((v, i) => `${((i / (finite.length - 1)) * width).toFixed(1)},${(height - 2 - ((v - min) / span) * (height - 4)).toFixed(1)}`)
    .join(" ");
  return (
    <svg width={width} height={height} role="img" aria-label={`${label}: ${finite[0]?.toFixed(2)} to ${finite[finite.length - 1]?.toFixed(2)}`}>
      <polyline points={points} fill="none" stroke="var(--color-accent)" strokeWidth={1.5} />
    </svg>
  );
}
