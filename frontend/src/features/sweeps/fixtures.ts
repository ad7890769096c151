/** A sweep as the API answers it (the contract's shapes), for the sweeps tests. */
import type { SweepDetail, Trial } from "./lib/types";

function trial(number: number, fields: Partial<Trial>): Trial {
  return {
    number,
    run: { id: 100 + number, name: `lr-sweep-t${number}`, status: "succeeded" },
    params: {},
    state: "complete",
    value: null,
    steps: 0,
    intermediate: [],
    stopped_at_step: null,
    stop_reason: "",
    created_at: "2026-11-28T18:00:00Z",
    finished_at: "2026-11-28T18:05:00Z",
    ...fields,
  };
}

export const sweepTrials: Trial[] = [
  trial(0, { params: { "actor.optim.lr": 1e-5, "rollout.n": 2, "rollout.temperature": 0.7, reward_version: 7 }, value: 0.42, steps: 4, intermediate: [[1, 0.2], [2, 0.3], [3, 0.38], [4, 0.42]] }),
  trial(1, { params: { "actor.optim.lr": 3e-4, "rollout.n": 8, "rollout.temperature": 1.0, reward_version: 8 }, value: 0.81, steps: 4, intermediate: [[1, 0.3], [2, 0.55], [3, 0.7], [4, 0.81]] }),
  trial(2, {
    params: { "actor.optim.lr": 1e-3, "rollout.n": 4, "rollout.temperature": 0.7, reward_version: 7 },
    state: "pruned",
    value: 0.1,
    steps: 2,
    intermediate: [[1, 0.05], [2, 0.1]],
    stopped_at_step: 2,
    stop_reason: "ASHA: below the rung's best half at step 2",
  }),
  trial(3, {
    run: { id: 103, name: "lr-sweep-t3", status: "running" },
    params: { "actor.optim.lr": 5e-5, "rollout.n": 6, "rollout.temperature": 1.0, reward_version: 8 },
    state: "running",
    value: 0.5,
    steps: 2,
    intermediate: [[1, 0.3], [2, 0.5]],
    finished_at: null,
  }),
  trial(4, { run: { id: 104, name: "lr-sweep-t4", status: "failed" }, params: { "actor.optim.lr": 2e-4, "rollout.n": 2, "rollout.temperature": 1.0, reward_version: 7 }, state: "failed", stop_reason: "The trainer failed: CUDA out of memory" }),
];

export const sweepDetail: SweepDetail = {
  id: 5,
  project: "demo",
  name: "lr and n",
  method: "tpe",
  status: "running",
  metric_label: "validation score",
  direction: "maximize",
  max_trials: 8,
  parallelism: 2,
  trial_counts: { running: 1, complete: 2, pruned: 1, failed: 1, stopped: 0 },
  best: { number: 1, run: 101, value: 0.81 },
  created_at: "2026-11-28T18:00:00Z",
  created_by: "ada",
  base_run: { id: 12, name: "arith-base", status: "succeeded" },
  preset: "",
  space: [
    { name: "actor.optim.lr", type: "float", low: 1e-5, high: 1e-3, log: true },
    { name: "rollout.n", type: "int", low: 2, high: 8, step: 2 },
    { name: "rollout.temperature", type: "choice", values: [0.7, 1.0] },
    { name: "reward_version", type: "input", values: [7, 8] },
  ],
  seed: 0,
  metric: "",
  metric_reward: "arith",
  pruner: { kind: "asha", min_steps: 2, reduction_factor: 2 },
  stop_on_critical_alert: true,
  status_reason: "",
  grid_size: null,
  trials: sweepTrials,
  best_trial: {
    ...(sweepTrials[1] as Trial),
    config_diff: [
      { path: "actor.optim.lr", base: 1e-6, value: 3e-4 },
      { path: "rollout.n", base: 4, value: 8 },
    ],
  },
  importance: { method: "PED-ANOVA", values: { "actor.optim.lr": 0.62, "rollout.n": 0.25, "rollout.temperature": 0.08, reward_version: 0.05 } },
};
