/** Pure helpers of "Ask the checkpoints": which samples may be asked, and the answers as columns. */
import type { Sample } from "../../samples/api";
import type { ModelResult } from "../api";

/** A training run's single-turn sample (an evaluation's own responses, split `eval`, are not asked). */
export function canAsk(sample: { split: string; num_turns: number }): boolean {
  return (sample.split === "train" || sample.split === "val") && sample.num_turns === 0;
}

export type AnswerColumn = {
  step: number; // the model's position in the evaluation: the step of its responses
  title: string; // "Base model" or "Step 40"
  label: string;
  answers: Sample[];
  /** Every answer was given the sample's prompt text (null: no answer yet). */
  samePrompt: boolean | null;
};

/** One column per evaluated model, in the evaluation's order (the base model first), with its answers. */
export function answerColumns(models: ModelResult[], samples: Sample[], prompt: string): AnswerColumn[] {
  return models.map((m) => {
    const answers = samples.filter((s) => s.step === m.step).sort((a, b) => a.id - b.id);
    return {
      step: m.step,
      title: m.kind === "checkpoint" && m.checkpoint_step !== null ? `Step ${m.checkpoint_step}` : "Base model",
      label: m.label,
      answers,
      samePrompt: answers.length === 0 ? null : answers.every((a) => a.prompt === prompt),
    };
  });
}
