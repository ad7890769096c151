import { describe, expect, it } from "vitest";

import type { ModelResult, Scores } from "../api";
import { chartRun, checkpointSeries, explorerLink, formatMetric, isLive } from "./results";

const scores = (mean: number): Scores => ({
  prompts: 4,
  responses: 4,
  k: 1,
  mean_score: mean,
  pass_at_k: mean,
  mean_at_k: mean,
  mean_length: 3.25,
  error_rate: 0,
});

function model(step: number, kind: "model" | "checkpoint", mean: number | null, checkpoint: number | null = null): ModelResult {
  return {
    step,
    label: kind === "model" ? "base" : `run @ step ${checkpoint}`,
    kind,
    model: kind === "model" ? 1 : null,
    run: kind === "checkpoint" ? 7 : null,
    run_name: kind === "checkpoint" ? "run" : null,
    checkpoint_step: checkpoint,
    scores: mean === null ? null : scores(mean),
    by_data_source: {},
  };
}

describe("evaluation results", () => {
  it("charts checkpoints by training step with the base model as the baseline", () => {
    const models = [model(1, "model", 0.1), model(2, "checkpoint", 0.5, 40), model(3, "checkpoint", 0.3, 20), model(4, "checkpoint", null, 60)];
    const { points, baseline } = checkpointSeries(models, "mean_score", chartRun(models));
    expect(points.map((p) => [p.step, p.value])).toEqual([
      [20, 0.3],
      [40, 0.5],
    ]);
    expect(baseline).toEqual({ label: "base", value: 0.1 });
  });

  it("has no baseline or points before results arrive", () => {
    const { points, baseline } = checkpointSeries([model(1, "model", null)], "pass_at_k", null);
    expect(points).toEqual([]);
    expect(baseline).toBeNull();
  });

  it("formats cells and links to the explorer filtered to one model", () => {
    expect(formatMetric(scores(0.5), "pass_at_k")).toBe("0.500");
    expect(formatMetric(scores(0.5), "mean_length")).toBe("3.3");
    expect(formatMetric(null, "mean_score")).toBe("–");
    expect(explorerLink("alpha", 12, 3)).toBe("/p/alpha/runs/12/rollouts?split=eval&step=3");
    expect(isLive("running")).toBe(true);
    expect(isLive("succeeded")).toBe(false);
  });
});
