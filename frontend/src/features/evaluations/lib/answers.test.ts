import type { Sample } from "../../samples/api";
import type { ModelResult } from "../api";
import { answerColumns, canAsk } from "./answers";

function model(step: number, kind: "model" | "checkpoint", checkpoint_step: number | null): ModelResult {
  const label = kind === "model" ? "demo-model" : `run @ step ${checkpoint_step}`;
  return { step, label, kind, model: kind === "model" ? 1 : null, run: 3, run_name: "run", checkpoint_step, scores: null, by_data_source: {} };
}

function answer(id: number, step: number, prompt = "Q"): Sample {
  return {
    id, run: 9, attempt: 1, step, split: "eval", group_id: "0:7", data_source: "arith", prompt, response: `A${id}`,
    ground_truth: "5", score: 1, components: {}, reward_extra: {}, advantage: 0, prompt_length: 3, response_length: 4,
    finish_reason: "stop", error: "", reward_version: null, reward_version_number: null, reward_function_name: null, superseded: false, created_at: "2026-01-01T00:00:00Z",
    labels: [], has_token_data: false, num_turns: 0,
  };  // prettier-ignore
}

describe("ask the checkpoints", () => {
  it("asks training and validation samples of single turns only", () => {
    expect(canAsk({ split: "train", num_turns: 0 })).toBe(true);
    expect(canAsk({ split: "val", num_turns: 0 })).toBe(true);
    expect(canAsk({ split: "eval", num_turns: 0 })).toBe(false);
    expect(canAsk({ split: "train", num_turns: 3 })).toBe(false);
  });

  it("puts each model's answers in its column, base model first, and checks their prompt", () => {
    const models = [model(1, "model", null), model(2, "checkpoint", 2), model(3, "checkpoint", 4)];
    const columns = answerColumns(models, [answer(12, 3), answer(10, 1), answer(11, 2, "other")], "Q");
    expect(columns.map((c) => c.title)).toEqual(["Base model", "Step 2", "Step 4"]);
    expect(columns.map((c) => c.answers.map((a) => a.id))).toEqual([[10], [11], [12]]);
    expect(columns.map((c) => c.samePrompt)).toEqual([true, false, true]);
    expect(answerColumns(models, [], "Q").every((c) => c.samePrompt === null && c.answers.length === 0)).toBe(true);
  });
});
