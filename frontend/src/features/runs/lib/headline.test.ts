import { describe, expect, it } from "vitest";

import { headlineCharts } from "./headline";

const GRPO = [
  "actor/entropy",
  "actor/kl_loss",
  "actor/pg_loss",
  "actor/ppo_kl",
  "critic/advantages/mean",
  "critic/score/max",
  "critic/score/mean",
  "critic/score/min",
  "response_length/max",
  "response_length/mean",
  "response_length/min",
  "reward/error_rate",
  "reward/format/mean",
  "reward/answer/mean",
  "val-core/arith/reward/mean@1",
];

describe("headline charts", () => {
  it("leads with the reward and its spread, then validation, length, KL, entropy and components", () => {
    const charts = headlineCharts(GRPO);
    expect(charts.map((c) => c.key)).toEqual([
      "critic/score/mean",
      "val-core/arith/reward/mean@1",
      "response_length/mean",
      "actor/kl_loss",
      "actor/entropy",
      "reward/answer/mean",
      "reward/format/mean",
    ]);
    expect(charts[0]?.band).toEqual(["critic/score/min", "critic/score/max"]);
    expect(charts[2]?.band).toEqual(["response_length/min", "response_length/max"]);
    expect(charts[5]?.title).toBe("Reward component: answer");
  });

  it("leaves out what the run did not log, and a spread missing one side", () => {
    const charts = headlineCharts(["critic/score/mean", "critic/score/max", "actor/ppo_kl"]);
    expect(charts).toEqual([
      { key: "critic/score/mean", title: "Reward (mean, min–max)" },
      { key: "actor/ppo_kl", title: "KL (actor/ppo_kl)" },
    ]);
    expect(headlineCharts(["perf/throughput"])).toEqual([]);
  });

  it("does not take the error rate for a reward component", () => {
    expect(headlineCharts(["reward/error_rate"]).length).toBe(0);
  });
});
