import { describe, expect, it } from "vitest";

import { emptyEvaluationForm, evaluationFieldOf, evaluationFormSchema, evaluationRequest, NO_MODELS, NO_PROMPTS } from "./evaluationForm";

const issues = (values: unknown) => evaluationFormSchema.safeParse(values).error?.issues.map((i) => [i.path.join("."), i.message]) ?? [];

describe("the evaluation form's schema", () => {
  it("asks for something to evaluate and prompts to ask", () => {
    expect(issues(emptyEvaluationForm)).toEqual([
      ["prompts", NO_PROMPTS],
      ["models", NO_MODELS],
    ]);
  });

  it("checks k and the temperature only when sampling", () => {
    const chosen = { ...emptyEvaluationForm, models: [1], prompts: { kind: "version", version: 3 } };
    expect(issues({ ...chosen, k: "0", temperature: "" })).toEqual([]);
    expect(issues({ ...chosen, greedy: false, k: "0", temperature: "3" }).map(([path]) => path)).toEqual(["k", "temperature"]);
  });
});

describe("the evaluation request", () => {
  it("lists project models and a run's checkpoint steps, and the chosen prompts and reward", () => {
    const values = { ...emptyEvaluationForm, models: [1], checkpointRun: 7, steps: [10, 20], prompts: { kind: "run" as const, run: 7 }, builtin_reward: "arith" as const, max_prompts: "5" };
    expect(evaluationRequest(values, "demo")).toEqual({
      project: "demo",
      models: [{ model: 1 }, { run: 7, step: 10 }, { run: 7, step: 20 }],
      validation_of_run: 7,
      builtin_reward: "arith",
      greedy: true,
      k: 1,
      temperature: 1,
      max_prompts: 5,
      priority: 0,
    });
  });

  it("sends a reward version instead of a built-in when one is chosen", () => {
    const body = evaluationRequest({ ...emptyEvaluationForm, reward_version: 4, builtin_reward: "arith", prompts: { kind: "version", version: 3 } }, "demo");
    expect(body).toMatchObject({ reward_version: 4, dataset_version: 3 });
    expect(body).not.toHaveProperty("builtin_reward");
  });
});

describe("the evaluation form's server errors", () => {
  it("land at the field that chose what the server refused", () => {
    expect(evaluationFieldOf("dataset_version")).toBe("prompts");
    expect(evaluationFieldOf("validation_of_run")).toBe("prompts");
    expect(evaluationFieldOf("models.1.step")).toBe("models");
    expect(evaluationFieldOf("project")).toBeNull();
  });
});
