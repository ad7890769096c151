/**
 * The run form's values, their schema and the request they make. The form holds what the
 * user chooses under the request's own field names (so most server error paths are form
 * paths as they are); the config tree is edited by the config form beside it (see
 * `useConfigDraft`) and joins the request here.
 */
import { z } from "zod";

import type { PresetName, RunClone, RunCreate, RunDetail, Validation } from "../api";
import type { StartRun } from "../hooks";
import { BUILTIN_REWARD, choiceValue, rewardModelsRequest, type DatasetChoice, type RewardModelChoice } from "../components/Pickers";
import type { ConfigTree } from "./configDiff";
import { INPUT_KINDS, type KindField } from "./inputKinds";

export const MISSING_DATASET = "Choose the training data: a dataset's latest version or an exact version.";

const blankOr = (test: (n: number) => boolean) => (text: string) => text.trim() === "" || test(Number(text));

export const runFormSchema = z.object({
  /** null: the suggested name (shown in the field, editable); emptied, it comes back. */
  name: z.string().nullable(),
  preset: z.string(),
  tags: z.string(),
  priority: z.string().refine(blankOr(Number.isInteger), "Priority is a whole number, e.g. 0 or 10."),
  resources: z.object({
    cpus: z.string().refine(blankOr((n) => Number.isFinite(n) && n > 0), "CPUs: a number above 0, or empty for the preset's."),
    gpus: z.string().refine(blankOr((n) => Number.isFinite(n) && n >= 0), "GPUs: a number of at least 0, or empty for the preset's."),
  }),
  model: z.number().nullable(),
  dataset: z.custom<DatasetChoice>().refine((choice) => choice !== null, MISSING_DATASET),
  validation: z.custom<Validation>(),
  validation_version: z.number().nullable(),
  /** A version, null for the parent's (or none), or BUILTIN_REWARD for the preset's own. */
  reward_version: z.number().nullable(),
  reward_models: z.custom<RewardModelChoice>(),
  /** The generic pickers' ids by request field (lib/inputKinds); null or absent: not chosen. */
  kinds: z.record(z.string(), z.number().nullable().optional()),
  overrides: z.string(),
});

/** What the form holds, as the user edits it. */
export type RunFormValues = z.input<typeof runFormSchema>;
/** What a valid form holds: the training data chosen. */
export type ValidRunForm = z.output<typeof runFormSchema>;
type RunField = keyof RunFormValues;

/**
 * The form field that shows each request field's errors, checked by tsc both ways: every
 * field of the generated create and clone requests (besides the config tree, shown by the
 * config form, notes, which the form does not set, and the generic pickers' fields, which
 * show their errors at `kinds.<field>`) names a field of the form. A request field added on
 * the server fails this until the form shows it, or its schema carries a picker.
 */
const REQUEST_FIELDS = {
  name: "name",
  preset: "preset",
  tags: "tags",
  priority: "priority",
  resources: "resources",
  overrides: "overrides",
  model: "model",
  dataset: "dataset",
  dataset_version: "dataset",
  validation: "validation",
  validation_version: "validation_version",
  reward_version: "reward_version",
  builtin_reward: "reward_version",
  reward_models: "reward_models",
} satisfies Record<Exclude<keyof RunCreate | keyof RunClone, "config" | "notes" | "project" | KindField>, RunField>;

/** The form field a server error path belongs to; null for config paths and any other. */
export function runFieldOf(path: string, kinds: readonly { field: string }[] = INPUT_KINDS): RunField | "resources.cpus" | "resources.gpus" | `kinds.${string}` | null {
  if (path === "resources.cpus" || path === "resources.gpus") return path;
  const head = path.split(".")[0] ?? "";
  if (kinds.some((kind) => kind.field === head)) return `kinds.${head}`;
  return head in REQUEST_FIELDS ? REQUEST_FIELDS[head as keyof typeof REQUEST_FIELDS] : null;
}

export type Preselected = { datasetVersion: number | null; rewardVersion: number | null };

/** The inputs the form starts with: the parent's (a clone), else those in the URL. */
export function inheritedInputs(parent: RunDetail | null, initial: Preselected): Pick<RunFormValues, "model" | "dataset" | "validation" | "validation_version" | "reward_version"> {
  if (!parent) {
    return {
      model: null,
      dataset: initial.datasetVersion !== null ? { version: initial.datasetVersion } : null,
      validation: "held_out",
      validation_version: null,
      reward_version: initial.rewardVersion,
    };
  }
  return {
    model: parent.model,
    dataset: parent.dataset_version !== null ? { version: parent.dataset_version } : null,
    validation: parent.validation,
    validation_version: parent.validation_version,
    reward_version: parent.reward_version,
  };
}

/** Everything the form starts with: a clone's parent's values, else the preset's defaults. */
export function initialRunForm(parent: RunDetail | null, preset: string, initial: Preselected): RunFormValues {
  return {
    name: parent ? `${parent.name}-clone` : null,
    preset: parent?.preset || preset,
    tags: parent ? parent.tags.join(", ") : "",
    priority: String(parent?.priority ?? 0),
    resources: {
      cpus: parent?.resources.cpus !== undefined ? String(parent.resources.cpus) : "",
      gpus: parent?.resources.gpus !== undefined ? String(parent.resources.gpus) : "",
    },
    ...inheritedInputs(parent, initial),
    reward_models: "default",
    kinds: Object.fromEntries(INPUT_KINDS.map((kind) => [kind.field, null])),
    overrides: "",
  };
}

/** The override lines the user typed, blank lines dropped. */
export function overrideLines(overrides: string): string[] {
  return overrides.split("\n").map((l) => l.trim()).filter(Boolean);
}

/** The request fields of the generic pickers the config shows (`kindInputsRequest`). */
type KindInputs = Partial<Record<KindField, number>>;
type RequestContext = { parent: RunDetail | null; initial: Preselected; suggestion: string; config: ConfigTree; project: string; kinds?: KindInputs };

/** The request the form describes: for a clone, only the inputs the user changed (the server keeps the parent's others). */
export function runRequest(values: ValidRunForm, { parent, initial, suggestion, config, project, kinds = {} }: RequestContext): StartRun {
  const { cpus, gpus } = values.resources;
  const resources = { ...(cpus.trim() !== "" ? { cpus: Number(cpus) } : {}), ...(gpus.trim() !== "" ? { gpus: Number(gpus) } : {}) };
  const common = {
    name: values.name || suggestion,
    config,
    overrides: overrideLines(values.overrides),
    priority: Number(values.priority),
    tags: values.tags.split(",").map((t) => t.trim()).filter(Boolean),
    ...(Object.keys(resources).length ? { resources } : {}),
  };
  const { model, dataset, validation, validation_version: validationVersion, reward_version: rewardVersion } = values;
  const chosen = {
    model,
    dataset: dataset && "dataset" in dataset ? dataset.dataset : null,
    dataset_version: dataset && "version" in dataset ? dataset.version : null,
    validation,
    validation_version: validation === "dataset_version" ? validationVersion : null,
    reward_version: rewardVersion === BUILTIN_REWARD ? null : rewardVersion,
  };
  const rewardModels = rewardModelsRequest(values.reward_models);
  if (parent) {
    const inherited = inheritedInputs(parent, initial);
    const changed: RunClone = {};
    if (model !== inherited.model && model !== null) changed.model = model;
    if (choiceValue(dataset) !== choiceValue(inherited.dataset)) Object.assign(changed, { dataset: chosen.dataset ?? undefined, dataset_version: chosen.dataset_version ?? undefined });
    if (validation !== inherited.validation || (validation === "dataset_version" && validationVersion !== inherited.validation_version)) {
      changed.validation = validation;
      if (validation === "dataset_version" && validationVersion !== null) changed.validation_version = validationVersion;
    }
    if (rewardVersion === BUILTIN_REWARD) changed.builtin_reward = true;
    else if (rewardVersion !== inherited.reward_version && rewardVersion !== null) changed.reward_version = rewardVersion;
    if (rewardModels !== undefined) changed.reward_models = rewardModels;
    return { clone: parent.id, body: { ...common, ...changed, ...kinds } };
  }
  const inputs = Object.fromEntries(Object.entries(chosen).filter(([key, value]) => value !== null && !(key === "validation" && value === "held_out")));
  return { clone: null, body: { ...common, ...inputs, ...(rewardModels !== undefined ? { reward_models: rewardModels } : {}), ...kinds, project, preset: values.preset as PresetName } };
}
