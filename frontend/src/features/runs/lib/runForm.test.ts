import { describe, expect, it } from "vitest";

import type { RunDetail } from "../api";
import { BUILTIN_REWARD } from "../components/Pickers";
import { initialRunForm, MISSING_DATASET, runFieldOf, runFormSchema, runRequest, type RunFormValues } from "./runForm";

const none = { datasetVersion: null, rewardVersion: null };
const context = { parent: null, initial: none, suggestion: "arith-grpo-0307-0905", config: { rollout: { n: 8 } }, project: "demo" };
const parent = {
  id: 7,
  name: "base",
  preset: "grpo-tiny-arith",
  tags: ["a", "b"],
  priority: 2,
  resources: { cpus: 2 },
  config: {},
  model: 4,
  dataset_version: 12,
  validation: "held_out",
  validation_version: null,
  reward_version: 9,
} as unknown as RunDetail;

function valid(values: RunFormValues) {
  const parsed = runFormSchema.safeParse(values);
  if (!parsed.success) throw new Error(parsed.error.message);
  return parsed.data;
}

describe("the run form's request", () => {
  it("names the chosen inputs of a new run and leaves out what the preset decides", () => {
    const values = { ...initialRunForm(null, "grpo-tiny-arith", none), dataset: { dataset: 3 }, tags: "x, y", resources: { cpus: "4", gpus: "" } };
    expect(runRequest(valid(values), context)).toEqual({
      clone: null,
      body: { name: "arith-grpo-0307-0905", config: { rollout: { n: 8 } }, overrides: [], priority: 0, tags: ["x", "y"], resources: { cpus: 4 }, dataset: 3, project: "demo", preset: "grpo-tiny-arith" },
    });
  });

  it("sends a clone only the inputs the user changed", () => {
    const start = initialRunForm(parent, "grpo-tiny-arith", none);
    expect(start).toMatchObject({ name: "base-clone", tags: "a, b", priority: "2", resources: { cpus: "2", gpus: "" }, dataset: { version: 12 } });
    const unchanged = runRequest(valid(start), { ...context, parent });
    expect(unchanged.clone).toBe(7);
    expect(Object.keys(unchanged.body).sort()).toEqual(["config", "name", "overrides", "priority", "resources", "tags"]);
    const changed = runRequest(valid({ ...start, dataset: { dataset: 5 }, reward_version: BUILTIN_REWARD, validation: "none" }), { ...context, parent });
    expect(changed.body).toMatchObject({ dataset: 5, builtin_reward: true, validation: "none" });
    expect(changed.body).not.toHaveProperty("model");
  });
});

describe("the run form's schema", () => {
  it("asks for the training data before anything is sent", () => {
    const parsed = runFormSchema.safeParse(initialRunForm(null, "grpo-tiny-arith", none));
    expect(parsed.success).toBe(false);
    expect(parsed.error?.issues.map((i) => [i.path.join("."), i.message])).toEqual([["dataset", MISSING_DATASET]]);
  });

  it("refuses a priority that is not a whole number and a negative GPU count", () => {
    const parsed = runFormSchema.safeParse({ ...initialRunForm(null, "p", none), dataset: { dataset: 1 }, priority: "1.5", resources: { cpus: "", gpus: "-1" } });
    expect(parsed.error?.issues.map((i) => i.path.join("."))).toEqual(["priority", "resources.gpus"]);
  });
});

describe("the run form's server errors", () => {
  it("land on the field that shows each request field", () => {
    expect(runFieldOf("name")).toBe("name");
    expect(runFieldOf("resources.gpus")).toBe("resources.gpus");
    expect(runFieldOf("dataset_version")).toBe("dataset");
    expect(runFieldOf("builtin_reward")).toBe("reward_version");
    expect(runFieldOf("reward_models.reward.model.path")).toBe("reward_models");
  });

  it("leave config paths and unknown fields to the caller", () => {
    expect(runFieldOf("config.actor.optim.lr")).toBeNull();
    expect(runFieldOf("config")).toBeNull();
    expect(runFieldOf("notes")).toBeNull();
  });
});
