/** Models as the API returns them, for the tests. */
import type { Model } from "./api";

export function model(overrides: Partial<Model> = {}): Model {
  return {
    id: 1,
    project: "demo",
    name: "tiny-demo",
    kind: "demo",
    role: "policy",
    status: "ready",
    progress: {},
    error: "",
    hub_id: "",
    revision: "",
    run: null,
    step: null,
    info: {
      architecture: "Qwen2ForCausalLM",
      model_type: "qwen2",
      parameters: 3_300_000,
      tokenizer: "PreTrainedTokenizerFast",
      chat_template: "{% for m in messages %}<b>{{ m.content }}</b>{% endfor %}",
      reward_model: false,
    },
    created_by: "ada",
    created_at: "2026-01-01T00:00:00Z",
    ...overrides,
  };
}

export function page<T>(results: T[]) {
  return { count: results.length, next: null, previous: null, results };
}
