/**
 * The new-sweep form's values, their schema and the request they make. Numbers are held as
 * the text typed (a half-typed "1e-" is not lost), checked here, and sent as numbers.
 * Fields carry the request's names, so most server error paths are form paths as they are.
 */
import { z } from "zod";

import type { Schemas } from "../../../api/client";
import { MISSING_DATASET } from "../../runs/lib/runForm";
import type { DatasetChoice } from "../../runs/components/Pickers";
import { compactNumber, floatGridMessage, gridSize, isInputField } from "./space";
import type { Direction, InputField, Method, Param, PrunerKind, SweepCreate } from "./types";

export type Builtin = Schemas["BuiltinRewardEnum"];
/** The trainer's built-in rewards (the generated enum's members; tsc checks the list against it). */
export const BUILTIN_REWARDS = ["arith", "exact_match", "numeric", "gsm8k", "boxed_math", "countdown", "format_regex", "length_penalty", "verl_default", "verl_code"] as const satisfies readonly Builtin[];

export const METHODS: { value: Method; label: string }[] = [
  { value: "tpe", label: "TPE (Optuna's Bayesian search)" },
  { value: "random", label: "Random" },
  { value: "grid", label: "Grid (every combination)" },
];

export const PRUNERS: { value: PrunerKind; label: string }[] = [
  { value: "asha", label: "ASHA (successive halving)" },
  { value: "median", label: "Median (below the median of earlier trials)" },
  { value: "none", label: "None (every trial runs to the end)" },
];

export const NO_PARAMS = "Add a parameter to search over.";
export const NO_METRIC_REWARD = "Choose the reward that scores every trial's validation: the reward version is searched over, so each trial's own reward cannot compare them.";

/** One parameter as the form holds it: every type's fields, the type's own ones used. */
export type ParamRow = {
  name: string;
  type: Param["type"];
  low: string;
  high: string;
  log: boolean;
  step: string;
  /** A choice's values, comma-separated as typed ("0.7, 1.0"; "true, false"; "grpo, rloo"). */
  values: string;
  /** An input's chosen item ids. */
  items: number[];
};

const isNumber = (text: string) => text.trim() !== "" && Number.isFinite(Number(text));
const isWhole = (text: string) => isNumber(text) && Number.isInteger(Number(text));

export const sweepFormSchema = z
  .object({
    name: z.string().trim().min(1, "Name the sweep."),
    base_run: z.number().nullable(),
    preset: z.string(),
    dataset: z.custom<DatasetChoice>(),
    reward_version: z.number().nullable(),
    overrides: z.string(),
    space: z.array(z.custom<ParamRow>()),
    method: z.custom<Method>(),
    seed: z.string().refine(isWhole, "The seed is a whole number, e.g. 0."),
    metric: z.string(),
    direction: z.custom<Direction>(),
    metric_reward: z.custom<Builtin | "">(),
    max_trials: z.string().refine((t) => isWhole(t) && Number(t) >= 1, "At least 1 trial, a whole number."),
    parallelism: z.string().refine((t) => isWhole(t) && Number(t) >= 1, "At least 1 trial at a time, a whole number."),
    pruner: z.object({
      kind: z.custom<PrunerKind>(),
      min_steps: z.string(),
      reduction_factor: z.string(),
    }),
    stop_on_critical_alert: z.boolean(),
  })
  .superRefine((values, ctx) => {
    const issue = (path: (string | number)[], message: string) => ctx.addIssue({ code: "custom", path, message });
    if (values.space.length === 0) issue(["space"], NO_PARAMS);
    const seen = new Set<string>();
    values.space.forEach((row, i) => {
      if (seen.has(row.name)) issue(["space", i, "name"], `${row.name} is searched twice: keep one.`);
      seen.add(row.name);
      for (const message of rowProblems(row)) issue(["space", i, message.field], message.text);
    });
    if (values.method === "grid") {
      const size = gridSize(values.space.map(toParam));
      if ("floats" in size) issue(["method"], floatGridMessage(size.floats));
    }
    if (values.space.some((row) => row.name === "reward_version") && !values.metric_reward) issue(["metric_reward"], NO_METRIC_REWARD);
    if (values.base_run === null && values.dataset === null && !values.space.some((row) => row.name === "dataset_version")) issue(["dataset"], MISSING_DATASET);
    if (values.pruner.kind !== "none") {
      const { min_steps: minSteps, reduction_factor: factor } = values.pruner;
      if (!(isWhole(minSteps) && Number(minSteps) >= 1)) issue(["pruner", "min_steps"], "At least 1 step before a trial can be pruned, a whole number.");
      if (values.pruner.kind === "asha" && !(isWhole(factor) && Number(factor) >= 2)) issue(["pruner", "reduction_factor"], "ASHA keeps 1 in this many trials at each rung: a whole number of at least 2.");
    }
  });

export type SweepFormValues = z.input<typeof sweepFormSchema>;
export type ValidSweepForm = z.output<typeof sweepFormSchema>;

/** What is wrong with one parameter's fields, by the form field to show it at. */
export function rowProblems(row: ParamRow): { field: keyof ParamRow; text: string }[] {
  const out: { field: keyof ParamRow; text: string }[] = [];
  if (row.type === "float" || row.type === "int") {
    const check = row.type === "int" ? isWhole : isNumber;
    const kind = row.type === "int" ? "a whole number" : "a number";
    if (!check(row.low)) out.push({ field: "low", text: `Low is ${kind}.` });
    if (!check(row.high)) out.push({ field: "high", text: `High is ${kind}.` });
    else if (check(row.low) && !(Number(row.high) > Number(row.low))) out.push({ field: "high", text: `High must be above low (${row.low}).` });
    if (row.type === "float" && row.log && check(row.low) && !(Number(row.low) > 0)) out.push({ field: "low", text: "A log range starts above 0." });
    if (row.type === "int" && !(isWhole(row.step) && Number(row.step) >= 1)) out.push({ field: "step", text: "The step is a whole number of at least 1." });
  }
  if (row.type === "choice") {
    const values = splitValues(row.values).map(String);
    if (values.length === 0) out.push({ field: "values", text: "List at least one value, comma-separated." });
    else if (new Set(values).size < values.length) out.push({ field: "values", text: "A value is listed twice." });
  }
  if (row.type === "input" && row.items.length === 0) out.push({ field: "items", text: "Choose at least one." });
  return out;
}

/** "0.7, 1.0, fast" -> [0.7, 1, "fast"]: numbers and true/false as such, anything else as text. */
export function splitValues(text: string): (string | number | boolean)[] {
  return text
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean)
    .map((item) => (item === "true" ? true : item === "false" ? false : isNumber(item) ? Number(item) : item));
}

/** The parameter a row describes. */
export function toParam(row: ParamRow): Param {
  switch (row.type) {
    case "float":
      return { name: row.name, type: "float", low: Number(row.low), high: Number(row.high), log: row.log };
    case "int":
      return { name: row.name, type: "int", low: Number(row.low), high: Number(row.high), step: Number(row.step) };
    case "choice":
      return { name: row.name, type: "choice", values: splitValues(row.values) };
    case "input":
      return { name: row.name as InputField, type: "input", values: row.items };
  }
}

/** The row a parameter is edited as. */
export function toRow(param: Param): ParamRow {
  const row: ParamRow = { name: param.name, type: param.type, low: "", high: "", log: false, step: "1", values: "", items: [] };
  switch (param.type) {
    case "float":
      return { ...row, low: compactNumber(param.low), high: compactNumber(param.high), log: param.log };
    case "int":
      return { ...row, low: String(param.low), high: String(param.high), step: String(param.step) };
    case "choice":
      return { ...row, values: param.values.map(String).join(", ") };
    case "input":
      return { ...row, items: param.values };
  }
}

/** The form's start: a sweep of `baseRun` (a run's "Sweep from this run"), else of a preset. */
export function initialSweepForm(base: { run: { id: number; name: string } | null; preset: string }): SweepFormValues {
  return {
    name: base.run ? `${base.run.name}-sweep` : `${base.preset}-sweep`,
    base_run: base.run?.id ?? null,
    preset: base.preset,
    dataset: null,
    reward_version: null,
    overrides: "",
    space: [],
    method: "tpe",
    seed: "0",
    metric: "",
    direction: "maximize",
    metric_reward: "",
    max_trials: "8",
    parallelism: "2",
    pruner: { kind: "asha", min_steps: "2", reduction_factor: "2" },
    stop_on_critical_alert: true,
  };
}

/** The request the form describes. */
export function sweepRequest(values: ValidSweepForm, project: string): SweepCreate {
  const pruner = {
    kind: values.pruner.kind,
    // The server checks these whatever the kind: a pruner that prunes nothing sends its defaults.
    min_steps: values.pruner.kind === "none" ? 1 : Number(values.pruner.min_steps),
    reduction_factor: values.pruner.kind === "asha" ? Number(values.pruner.reduction_factor) : 2,
  };
  const common = {
    project,
    name: values.name.trim(),
    space: values.space.map(toParam),
    method: values.method,
    seed: Number(values.seed),
    metric: values.metric.trim(),
    direction: values.direction,
    metric_reward: values.metric_reward,
    max_trials: Number(values.max_trials),
    parallelism: Number(values.parallelism),
    pruner,
    stop_on_critical_alert: values.stop_on_critical_alert,
    overrides: values.overrides.split("\n").map((line) => line.trim()).filter(Boolean),
  };
  if (values.base_run !== null) return { ...common, base_run: values.base_run, preset: "" };
  const inputs: Record<string, number> = {};
  const { dataset } = values;
  if (dataset && "dataset" in dataset) inputs.dataset = dataset.dataset;
  if (dataset && "version" in dataset) inputs.dataset_version = dataset.version;
  if (values.reward_version !== null) inputs.reward_version = values.reward_version;
  return { ...common, base_run: null, preset: values.preset, inputs };
}

type SweepField = keyof SweepFormValues | `space.${number}.${keyof ParamRow}` | "pruner.min_steps" | "pruner.reduction_factor" | "pruner.kind";

/**
 * The form field that shows a server error's path; null for one no field shows (a toast
 * says it). A parameter's path ("space.1.values") is its row's field, an input's values
 * its chosen items.
 */
export function sweepFieldOf(path: string, rows: readonly ParamRow[]): SweepField | null {
  const parts = path.split(".");
  const [head, second, third] = parts;
  if (head === "space") {
    const index = Number(second);
    const row = Number.isInteger(index) ? rows[index] : undefined;
    if (!row) return "space";
    if (third === "values" && row.type === "input") return `space.${index}.items`;
    if (third && third in row) return `space.${index}.${third as keyof ParamRow}`;
    return `space.${index}.name`;
  }
  if (head === "pruner") return second === "min_steps" || second === "reduction_factor" || second === "kind" ? `pruner.${second}` : "pruner.kind";
  if (head === "inputs") return second === "reward_version" ? "reward_version" : second && isInputField(second) && second !== "dataset_version" ? null : "dataset";
  if (head === "config") return "overrides";
  const fields: (keyof SweepFormValues)[] = ["name", "preset", "overrides", "method", "seed", "metric", "direction", "metric_reward", "max_trials", "parallelism", "stop_on_critical_alert"];
  return fields.find((field) => field === head) ?? null;
}
