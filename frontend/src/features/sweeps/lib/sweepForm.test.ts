import { describe, expect, it } from "vitest";

import { NO_METRIC_REWARD, NO_PARAMS, initialSweepForm, sweepFieldOf, sweepFormSchema, sweepRequest, toRow, type ParamRow, type SweepFormValues } from "./sweepForm";

const lr: ParamRow = toRow({ name: "actor.optim.lr", type: "float", low: 1e-5, high: 1e-3, log: true });
const n: ParamRow = toRow({ name: "rollout.n", type: "int", low: 2, high: 8, step: 2 });
const temperature: ParamRow = toRow({ name: "rollout.temperature", type: "choice", values: [0.7, 1.0] });
const rewards: ParamRow = toRow({ name: "reward_version", type: "input", values: [7, 8] });

function fromRun(overrides: Partial<SweepFormValues> = {}): SweepFormValues {
  return { ...initialSweepForm({ run: { id: 12, name: "arith-base" }, preset: "grpo-tiny-arith" }), space: [lr, n], ...overrides };
}

function errorsOf(values: SweepFormValues): Record<string, string> {
  const parsed = sweepFormSchema.safeParse(values);
  if (parsed.success) return {};
  return Object.fromEntries(parsed.error.issues.map((issue) => [issue.path.join("."), issue.message]));
}

describe("sweepFormSchema", () => {
  it("accepts a sweep of a run with a float and an integer range", () => {
    expect(errorsOf(fromRun())).toEqual({});
  });

  it("refuses a grid over a float range, at the method", () => {
    expect(errorsOf(fromRun({ method: "grid" }))).toEqual({ method: expect.stringMatching(/actor\.optim\.lr is a float range/) });
    expect(errorsOf(fromRun({ method: "grid", space: [n, temperature] }))).toEqual({});
  });

  it("needs the scoring reward when the reward version is searched", () => {
    expect(errorsOf(fromRun({ space: [lr, rewards] }))).toEqual({ metric_reward: NO_METRIC_REWARD });
    expect(errorsOf(fromRun({ space: [lr, rewards], metric_reward: "arith" }))).toEqual({});
  });

  it("says what is wrong with each parameter at its own field", () => {
    const errors = errorsOf(fromRun({ space: [{ ...lr, low: "0", high: "1e-3" }, { ...n, high: "1", step: "0" }, { ...temperature, values: " , " }, { ...rewards, items: [] }], metric_reward: "arith" }));
    expect(errors).toEqual({
      "space.0.low": "A log range starts above 0.",
      "space.1.high": "High must be above low (2).",
      "space.1.step": "The step is a whole number of at least 1.",
      "space.2.values": "List at least one value, comma-separated.",
      "space.3.items": "Choose at least one.",
    });
  });

  it("needs a parameter, a name, and a parameter searched once", () => {
    expect(errorsOf(fromRun({ space: [] }))).toEqual({ space: NO_PARAMS });
    expect(errorsOf(fromRun({ name: "  " }))).toEqual({ name: "Name the sweep." });
    expect(errorsOf(fromRun({ space: [n, n] }))).toEqual({ "space.1.name": "rollout.n is searched twice: keep one." });
  });

  it("needs training data for a preset's sweep unless the data version is searched", () => {
    const preset = { ...fromRun(), base_run: null };
    expect(Object.keys(errorsOf(preset))).toEqual(["dataset"]);
    expect(errorsOf({ ...preset, space: [lr, toRow({ name: "dataset_version", type: "input", values: [3, 4] })] })).toEqual({});
  });

  it("checks the pruner's numbers only when it prunes", () => {
    expect(errorsOf(fromRun({ pruner: { kind: "asha", min_steps: "0", reduction_factor: "1" } }))).toEqual({
      "pruner.min_steps": expect.stringMatching(/At least 1 step/),
      "pruner.reduction_factor": expect.stringMatching(/at least 2/),
    });
    const none = sweepFormSchema.parse(fromRun({ pruner: { kind: "none", min_steps: "", reduction_factor: "" } }));
    expect(sweepRequest(none, "demo").pruner).toEqual({ kind: "none", min_steps: 1, reduction_factor: 2 });
  });
});

describe("sweepRequest", () => {
  it("sends a run's sweep with its space as the contract names it, numbers as numbers", () => {
    const values = sweepFormSchema.parse(fromRun({ space: [lr, n, temperature, rewards], metric_reward: "arith", overrides: "trainer.total_steps=20\n\n", max_trials: "12", parallelism: "3" }));
    expect(sweepRequest(values, "demo")).toEqual({
      project: "demo",
      name: "arith-base-sweep",
      base_run: 12,
      preset: "",
      space: [
        { name: "actor.optim.lr", type: "float", low: 1e-5, high: 1e-3, log: true },
        { name: "rollout.n", type: "int", low: 2, high: 8, step: 2 },
        { name: "rollout.temperature", type: "choice", values: [0.7, 1] },
        { name: "reward_version", type: "input", values: [7, 8] },
      ],
      method: "tpe",
      seed: 0,
      metric: "",
      direction: "maximize",
      metric_reward: "arith",
      max_trials: 12,
      parallelism: 3,
      pruner: { kind: "asha", min_steps: 2, reduction_factor: 2 },
      stop_on_critical_alert: true,
      overrides: ["trainer.total_steps=20"],
    });
  });

  it("sends a preset's sweep with its base inputs", () => {
    const values = sweepFormSchema.parse({ ...fromRun(), base_run: null, dataset: { version: 3 }, reward_version: 7 });
    const request = sweepRequest(values, "demo");
    expect(request).toMatchObject({ base_run: null, preset: "grpo-tiny-arith", inputs: { dataset_version: 3, reward_version: 7 } });
  });

  it("reads booleans and text among a choice's values", () => {
    const values = sweepFormSchema.parse(fromRun({ space: [toRow({ name: "actor.use_kl_loss", type: "choice", values: [true, false] }), { ...temperature, name: "algorithm.adv_estimator", values: "grpo, rloo" }] }));
    expect(sweepRequest(values, "demo").space).toEqual([
      { name: "actor.use_kl_loss", type: "choice", values: [true, false] },
      { name: "algorithm.adv_estimator", type: "choice", values: ["grpo", "rloo"] },
    ]);
  });
});

describe("sweepFieldOf", () => {
  it("puts a server error at the field that shows it", () => {
    const rows = [lr, rewards];
    expect(sweepFieldOf("space.0.low", rows)).toBe("space.0.low");
    expect(sweepFieldOf("space.1.values", rows)).toBe("space.1.items");
    expect(sweepFieldOf("space.1", rows)).toBe("space.1.name");
    expect(sweepFieldOf("space", rows)).toBe("space");
    expect(sweepFieldOf("parallelism", rows)).toBe("parallelism");
    expect(sweepFieldOf("pruner.min_steps", rows)).toBe("pruner.min_steps");
    expect(sweepFieldOf("inputs.reward_version", rows)).toBe("reward_version");
    expect(sweepFieldOf("inputs.dataset_version", rows)).toBe("dataset");
    expect(sweepFieldOf("base_run", rows)).toBeNull();
  });
});
