/** Pure helpers over an evaluation's results: the table's cells and the checkpoint chart's series. */
import type { ModelResult, Scores } from "../api";

const LIVE = new Set(["queued", "starting", "running", "cancelling"]);

export function isLive(status: string): boolean {
  return LIVE.has(status);
}

export type MetricKey = "mean_score" | "pass_at_k" | "mean_at_k" | "mean_length" | "error_rate";

export const METRICS: { key: MetricKey; label: (k: number) => string }[] = [
  { key: "mean_score", label: () => "Mean score" },
  { key: "pass_at_k", label: (k) => `pass@${k}` },
  { key: "mean_at_k", label: (k) => `mean@${k}` },
  { key: "mean_length", label: () => "Length (tokens)" },
  { key: "error_rate", label: () => "Error rate" },
];

/** A score cell: three decimals, lengths with one, "–" before the model's responses arrive. */
export function formatMetric(scores: Scores | null | undefined, key: MetricKey): string {
  if (!scores) return "–";
  const value = scores[key];
  return key === "mean_length" ? value.toFixed(1) : value.toFixed(3);
}

export type CheckpointPoint = { step: number; value: number; label: string };

/**
 * The chart across a run's checkpoints: one point per evaluated checkpoint of `run` (by its
 * training step, with results), and the baseline: the first evaluated project model's value.
 */
export function checkpointSeries(
  models: ModelResult[],
  key: MetricKey,
  run: number | null,
): { points: CheckpointPoint[]; baseline: { label: string; value: number } | null } {
  const points = models
    .filter((m) => m.kind === "checkpoint" && m.checkpoint_step !== null && m.scores && (run === null || m.run === run))
    .map((m) => ({ step: m.checkpoint_step as number, value: (m.scores as Scores)[key], label: m.label }))
    .sort((a, b) => a.step - b.step);
  const base = models.find((m) => m.kind === "model" && m.scores);
  return { points, baseline: base?.scores ? { label: base.label, value: base.scores[key] } : null };
}

/** The run whose checkpoints the chart follows: the first checkpoint's run (null: none evaluated). */
export function chartRun(models: ModelResult[]): number | null {
  return models.find((m) => m.kind === "checkpoint")?.run ?? null;
}

/** The rollout explorer filtered to one model's responses (its step in the evaluation). */
export function explorerLink(project: string, evaluation: number, step?: number): string {
  const query = new URLSearchParams({ split: "eval" });
  if (step !== undefined) query.set("step", String(step));
  return `/p/${project}/runs/${evaluation}/rollouts?${query.toString()}`;
}
