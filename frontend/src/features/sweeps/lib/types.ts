/**
 * The sweeps API's shapes, as its contract states them (the lead's SWEEPS_API.md): the
 * generated schema replaces them once the server publishes the endpoints.
 */

export type SweepStatus = "running" | "paused" | "stopped" | "finished";
export type TrialState = "running" | "complete" | "pruned" | "failed" | "stopped";
export type Method = "random" | "grid" | "tpe";
export type Direction = "maximize" | "minimize";
export type PrunerKind = "asha" | "median" | "none";

/** The run input fields a sweep may search over (ids of the project's items). */
export type InputField = "model" | "dataset_version" | "validation_version" | "reward_version" | "critic_model" | "lora_adapter";

export type FloatParam = { name: string; type: "float"; low: number; high: number; log: boolean };
export type IntParam = { name: string; type: "int"; low: number; high: number; step: number };
export type ChoiceParam = { name: string; type: "choice"; values: (string | number | boolean)[] };
export type InputParam = { name: InputField; type: "input"; values: number[] };
export type Param = FloatParam | IntParam | ChoiceParam | InputParam;

export type Pruner = { kind: PrunerKind; min_steps: number; reduction_factor: number };

export type ParamValue = string | number | boolean | null;

export type Trial = {
  number: number;
  run: { id: number; name: string; status: string };
  params: Record<string, ParamValue>;
  state: TrialState;
  value: number | null;
  steps: number;
  intermediate: [number, number][];
  stopped_at_step: number | null;
  stop_reason: string;
  created_at: string;
  finished_at: string | null;
};

export type ConfigChange = { path: string; base: unknown; value: unknown };

export type TrialCounts = Record<TrialState, number>;

export type SweepSummary = {
  id: number;
  project: string;
  name: string;
  method: Method;
  status: SweepStatus;
  metric_label: string;
  direction: Direction;
  max_trials: number;
  parallelism: number;
  trial_counts: TrialCounts;
  best: { number: number; run: number; value: number } | null;
  created_at: string;
  created_by: string;
};

export type SweepDetail = SweepSummary & {
  base_run: { id: number; name: string } | null;
  preset: string;
  space: Param[];
  seed: number;
  metric: string;
  metric_reward: string;
  pruner: Pruner;
  stop_on_critical_alert: boolean;
  status_reason: string;
  grid_size: number | null;
  trials: Trial[];
  best_trial: (Trial & { config_diff: ConfigChange[] }) | null;
  importance: { method: string; values: Record<string, number> } | null;
};

export type SweepCreate = {
  project: string;
  name: string;
  base_run: number | null;
  preset?: string;
  config?: Record<string, unknown> | null;
  overrides?: string[];
  inputs?: Record<string, number>;
  space: Param[];
  method: Method;
  seed: number;
  metric: string;
  direction: Direction;
  metric_reward: string;
  max_trials: number;
  parallelism: number;
  pruner: Pruner;
  stop_on_critical_alert: boolean;
};
