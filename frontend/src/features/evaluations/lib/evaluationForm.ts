/**
 * The new-evaluation form's values, their schema and the request they make. Fields carry
 * the request's names where the form holds one value per request field; the models to
 * compare are two fields (project models, and steps of one run's checkpoints) that make the
 * request's `models` list.
 */
import { z } from "zod";

import type { Schemas } from "../../../api/client";
import type { EvaluationCreate } from "../api";

export type Builtin = Schemas["BuiltinRewardEnum"];
export const BUILTINS: Builtin[] = ["arith", "exact_match", "numeric", "gsm8k", "boxed_math", "countdown", "format_regex", "length_penalty", "verl_default", "verl_code"];

/** Where the prompts come from: a run's validation data or a dataset version. */
export type Prompts = { kind: "run"; run: number | null } | { kind: "version"; version: number | null };

export const NO_MODELS = "Choose a model or a checkpoint to evaluate.";
export const NO_PROMPTS = "Choose the prompts: a run's validation data or a dataset version.";

const blankOr = (test: (n: number) => boolean) => (text: string) => text.trim() === "" || test(Number(text));

export const evaluationFormSchema = z
  .object({
    name: z.string(),
    models: z.array(z.number()),
    checkpointRun: z.number().nullable(),
    steps: z.array(z.number()),
    prompts: z.custom<Prompts>().refine((p) => (p.kind === "run" ? p.run !== null : p.version !== null), NO_PROMPTS),
    reward_version: z.number().nullable(),
    builtin_reward: z.custom<Builtin | "">(),
    greedy: z.boolean(),
    k: z.string(),
    temperature: z.string(),
    max_prompts: z.string().refine(blankOr((n) => Number.isInteger(n) && n >= 1), "At least 1 prompt, a whole number; or empty for all."),
  })
  .superRefine((values, ctx) => {
    if (values.models.length + values.steps.length === 0) ctx.addIssue({ code: "custom", path: ["models"], message: NO_MODELS });
    if (values.greedy) return; // k and temperature are not sent for a greedy evaluation
    const k = Number(values.k);
    if (!(Number.isInteger(k) && k >= 1 && k <= 64)) ctx.addIssue({ code: "custom", path: ["k"], message: "k is a whole number from 1 to 64." });
    const t = Number(values.temperature);
    if (!(values.temperature.trim() !== "" && t >= 0.01 && t <= 2)) ctx.addIssue({ code: "custom", path: ["temperature"], message: "Temperature is from 0.01 to 2." });
  });

export type EvaluationFormValues = z.input<typeof evaluationFormSchema>;

export const emptyEvaluationForm: EvaluationFormValues = {
  name: "",
  models: [],
  checkpointRun: null,
  steps: [],
  prompts: { kind: "run", run: null },
  reward_version: null,
  builtin_reward: "",
  greedy: true,
  k: "4",
  temperature: "1.0",
  max_prompts: "",
};

type FormField = keyof EvaluationFormValues;

/**
 * The form field showing each request field's errors, checked by tsc against the generated
 * request (fields the form does not set: project, priority, max_new_tokens). Errors of the
 * models' list (the whole list or an item) show at the project models' choice.
 */
const REQUEST_FIELDS = {
  name: "name",
  models: "models",
  dataset_version: "prompts",
  validation_of_run: "prompts",
  reward_version: "reward_version",
  builtin_reward: "builtin_reward",
  greedy: "greedy",
  k: "k",
  temperature: "temperature",
  max_prompts: "max_prompts",
} satisfies Record<Exclude<keyof EvaluationCreate, "project" | "priority" | "max_new_tokens">, FormField>;

/** The form field a server error path belongs to; null for any other (shown once, for the form). */
export function evaluationFieldOf(path: string): FormField | null {
  const head = path.split(".")[0] ?? "";
  return head in REQUEST_FIELDS ? REQUEST_FIELDS[head as keyof typeof REQUEST_FIELDS] : null;
}

/** The request a valid form makes. */
export function evaluationRequest(values: EvaluationFormValues, project: string): EvaluationCreate {
  const { prompts, checkpointRun } = values;
  return {
    project,
    name: values.name || undefined,
    models: [...values.models.map((model) => ({ model })), ...(checkpointRun === null ? [] : values.steps.map((step) => ({ run: checkpointRun, step })))],
    ...(prompts.kind === "run" ? { validation_of_run: prompts.run } : { dataset_version: prompts.version }),
    ...(values.reward_version !== null ? { reward_version: values.reward_version } : values.builtin_reward ? { builtin_reward: values.builtin_reward } : {}),
    greedy: values.greedy,
    k: values.greedy ? 1 : Number(values.k),
    temperature: Number(values.temperature),
    ...(values.max_prompts.trim() ? { max_prompts: Number(values.max_prompts) } : {}),
    priority: 0,
  };
}
