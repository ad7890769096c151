import { useEffect, useState } from "react";

import { Button } from "../../../components/Button";
import { SelectField } from "../../../components/Field";
import { Loading } from "../../../components/Spinner";
import { useToast } from "../../../components/Toast";
import ui from "../../../components/ui.module.css";
import { formatParameters } from "../../../lib/units";
import type { Dataset, DatasetVersion } from "../../datasets/api";
import { PreviewRows } from "../../datasets/components/PreviewRows";
import { usePreview, useProjectDatasetVersions } from "../../datasets/hooks";
import type { Model } from "../../models/api";
import { useAddModel, useAvailableFolders, useReadyModels } from "../../models/hooks";
import { modelFacts } from "../../models/lib/format";
import { useRewardFunctions, useRewardVersion, useRewardVersions, useRewardVersionsOf } from "../../rewards/hooks";
import type { Validation } from "../api";

type PickerProps = { slug: string; value: number | null; onChange: (id: number | null) => void; errors: string[]; emptyLabel?: string };

function modelSummary(model: Model): string {
  const { architecture, parameters } = modelFacts(model);
  return `${architecture || "unknown architecture"} · ${parameters === null ? "unknown size" : `${formatParameters(parameters)} parameters`}`;
}

/** The policy to train: one of the project's models, or none (the preset's demo model). */
export function ModelPicker({ slug, value, onChange, errors, emptyLabel = "(the preset's demo model)" }: PickerProps) {
  const toast = useToast();
  const models = useReadyModels(slug, "policy");
  const none = models.data !== undefined && models.data.length === 0;
  const offered = useAvailableFolders(slug, "policy", none);
  const add = useAddModel();
  const addAndUse = (folder: string) =>
    add.mutate(
      { project: slug, folder },
      {
        onSuccess: (model) => {
          onChange(model.id);
          toast.show(`Model “${model.name}” added to the project.`, "success");
        },
        onError: (error) => toast.error(error),
      },
    );
  const chosen = models.data?.find((m) => m.id === value);
  return (
    <div>
      <SelectField label="Model" help={chosen ? modelSummary(chosen) : "The policy the run trains."} errors={errors} value={value ?? ""} onChange={(value) => onChange(value ? Number(value) : null)}>
        <option value="">{emptyLabel}</option>
        {/* A demo model is what the empty choice trains already: listed only when chosen. */}
        {models.data
          ?.filter((m) => m.kind !== "demo" || m.id === value)
          .map((m) => (
            <option key={m.id} value={m.id}>
              {m.name} ({m.kind})
            </option>
          ))}
      </SelectField>
      {models.isError ? <p className={ui.muted}>Could not load the project&apos;s models.</p> : null}
      {none ? (
        <div className={ui.card} style={{ marginBottom: 12, padding: 12 }} aria-label="Models to add">
          <p className={ui.muted} style={{ marginTop: 0 }}>
            This project has no models yet: the run trains the preset&apos;s demo model. To choose one, add a folder the server offers:
          </p>
          {offered.isPending ? <Loading what="the server's model folders" /> : null}
          {offered.data && offered.data.length === 0 ? <p className={ui.muted}>The server offers no model folders.</p> : null}
          <ul style={{ listStyle: "none", padding: 0, margin: 0, display: "grid", gap: 6 }}>
            {offered.data?.map((f) => (
              <li key={f.folder} className={ui.row}>
                <span>{f.name}</span>
                <span className={ui.pill}>{f.kind}</span>
                <Button onClick={() => addAndUse(f.folder)} disabled={add.isPending}>
                  Add and use
                </Button>
              </li>
            ))}
          </ul>
        </div>
      ) : null}
    </div>
  );
}

/** The training data: a dataset (its latest version when the run is created) or an exact version. */
export type DatasetChoice = { dataset: number } | { version: number } | null;

export function choiceValue(choice: DatasetChoice): string {
  if (!choice) return "";
  return "dataset" in choice ? `d:${choice.dataset}` : `v:${choice.version}`;
}

function parseChoice(text: string): DatasetChoice {
  const [kind, id] = text.split(":");
  if (!id) return null;
  return kind === "d" ? { dataset: Number(id) } : { version: Number(id) };
}


/** The dataset and version a choice means (a dataset: its latest version). */
export function resolveChoice(choice: DatasetChoice, datasets: Dataset[] | undefined, versions: Map<number, DatasetVersion[]>): { dataset: Dataset; version: DatasetVersion | null } | null {
  if (!choice || !datasets) return null;
  if ("dataset" in choice) {
    const dataset = datasets.find((d) => d.id === choice.dataset);
    return dataset ? { dataset, version: dataset.latest_version } : null;
  }
  for (const dataset of datasets) {
    const version = versions.get(dataset.id)?.find((v) => v.id === choice.version);
    if (version) return { dataset, version };
  }
  return null;
}

/** One choice that is never half-made: "arith · latest (v3)", or an exact "arith v2 · 1000 rows". */
export function DatasetPicker({ slug, value, onChange, errors }: { slug: string; value: DatasetChoice; onChange: (choice: DatasetChoice) => void; errors: string[] }) {
  const { datasets, versions, isPending } = useProjectDatasetVersions(slug);
  const chosen = resolveChoice(value, datasets, versions);
  return (
    <div>
      <SelectField label="Training data" help="A dataset's latest version (recorded as that version when the run is created), or an exact version." errors={errors} value={choiceValue(value)} onChange={(value) => onChange(parseChoice(value))} required>
        <option value="">{isPending ? "Loading datasets…" : datasets?.length ? "Choose a dataset version" : "No datasets in this project"}</option>
        {datasets?.map((d) => (
          <optgroup key={d.id} label={d.name}>
            {d.latest_version ? (
              <option value={`d:${d.id}`}>
                {d.name} · latest (v{d.latest_version.number})
              </option>
            ) : (
              <option disabled>{d.name} · no version yet</option>
            )}
            {versions.get(d.id)?.map((v) => (
              <option key={v.id} value={`v:${v.id}`}>
                {d.name} v{v.number} · {v.row_count} rows{v.message ? ` · ${v.message}` : ""}
              </option>
            ))}
          </optgroup>
        ))}
      </SelectField>
      {chosen?.version ? <DatasetPreview dataset={chosen.dataset.id} number={chosen.version.number} /> : null}
    </div>
  );
}

/** How many rows the data picker previews. */
const PREVIEW_ROWS = 5;

function DatasetPreview({ dataset, number }: { dataset: number; number: number }) {
  const preview = usePreview(dataset, number, 0, PREVIEW_ROWS);
  if (preview.isPending) return <Loading what="a preview" />;
  if (!preview.data) return null;
  return (
    <div style={{ marginBottom: 12 }}>
      <PreviewRows preview={preview.data} label="Dataset preview" compact />
    </div>
  );
}

export const VALIDATION_OPTIONS: { value: Validation; label: string }[] = [
  { value: "held_out", label: "Held-out rows of the training data (10%, max 500; or rows labelled val/test)" },
  { value: "dataset_version", label: "Another dataset version" },
  { value: "none", label: "None" },
];

type ValidationPickerProps = {
  slug: string;
  value: Validation;
  version: number | null;
  onChange: (validation: Validation, version: number | null) => void;
  errors: string[];
  versionErrors: string[];
};

/** What the run validates on: held-out rows, another version, or nothing. */
export function ValidationPicker({ slug, value, version, onChange, errors, versionErrors }: ValidationPickerProps) {
  const { datasets, versions } = useProjectDatasetVersions(slug);
  return (
    <fieldset style={{ border: "none", padding: 0, margin: "0 0 12px" }} aria-invalid={errors.length > 0}>
      <legend className={ui.label} style={{ marginBottom: 4 }}>
        Validation
      </legend>
      <div style={{ display: "grid", gap: 4 }}>
        {VALIDATION_OPTIONS.map((o) => (
          <label key={o.value} style={{ display: "flex", gap: 8, alignItems: "baseline", fontSize: "0.875rem" }}>
            <input type="radio" name="validation" value={o.value} checked={value === o.value} onChange={() => onChange(o.value, o.value === "dataset_version" ? version : null)} />
            {o.label}
          </label>
        ))}
      </div>
      {errors.length ? (
        <span className={ui.fieldError} role="alert">
          {errors.join(" ")}
        </span>
      ) : null}
      {value === "dataset_version" ? (
        <div style={{ marginTop: 8 }}>
          <SelectField label="Validation version" errors={versionErrors} value={version ?? ""} onChange={(value) => onChange("dataset_version", value ? Number(value) : null)}>
            <option value="">Choose a dataset version</option>
            {datasets?.map((d) => (
              <optgroup key={d.id} label={d.name}>
                {versions.get(d.id)?.map((v) => (
                  <option key={v.id} value={v.id}>
                    {d.name} v{v.number} · {v.row_count} rows
                  </option>
                ))}
              </optgroup>
            ))}
          </SelectField>
        </div>
      ) : null}
    </fieldset>
  );
}

/** The run's reward model (`reward.model.path`): as the preset or parent has it, none, or
 * one of the project's reward models. Extra reward models keep their config defaults. */
export type RewardModelChoice = "default" | "none" | number;
export const PRIMARY_REWARD_MODEL = "reward.model.path";

export function RewardModelPicker({
  slug,
  value,
  onChange,
  errors,
  defaultLabel,
}: {
  slug: string;
  value: RewardModelChoice;
  onChange: (choice: RewardModelChoice) => void;
  errors: string[];
  defaultLabel: string;
}) {
  const rewardModels = useReadyModels(slug, "reward").data ?? [];
  const chosen = typeof value === "number" ? rewardModels.find((m) => m.id === value) : undefined;
  return (
    <SelectField
  label="Reward model"
  help={chosen ? modelSummary(chosen) : "A model that scores responses beside (or instead of) the reward function."}
  errors={errors}
      value={String(value)}
      onChange={(value) => onChange(value === "default" || value === "none" ? value : Number(value))}>
      <option value="default">{defaultLabel}</option>
      <option value="none">No reward model</option>
      {rewardModels.map((m) => (
        <option key={m.id} value={m.id}>
          {m.name} ({m.kind})
        </option>
      ))}
    </SelectField>
  );
}

/** What a reward-model choice sends: nothing for the default, else the places it sets. */
export function rewardModelsRequest(choice: RewardModelChoice): Record<string, number> | undefined {
  if (choice === "default") return undefined;
  return choice === "none" ? {} : { [PRIMARY_REWARD_MODEL]: choice };
}

/** The reward picker's value for "the config's built-in reward" when that must be said
 * explicitly (a clone dropping its parent's version); reward version ids start at 1. */
export const BUILTIN_REWARD = 0;

/** Reward version picker showing the chosen version's code. Any version given is preselected.
 * With `offerBuiltin` (a clone of a run with a reward version), the built-in reward is a
 * choice of its own, `BUILTIN_REWARD`, beside keeping the parent's version (empty). */
export function RewardVersionPicker({
  slug,
  value,
  onChange,
  errors,
  emptyLabel = "(the config's built-in, or the scorer of each row's data source)",
  offerBuiltin = false,
}: PickerProps & { offerBuiltin?: boolean }) {
  const [functionId, setFunctionId] = useState<number | null>(null);
  const functions = useRewardFunctions(slug);
  // A preselected version (?reward_version=ID, a clone's): find its function among all of them.
  const searching = value !== null && value !== BUILTIN_REWARD && functionId === null;
  const allVersions = useRewardVersionsOf(searching ? (functions.data ?? []).map((f) => f.id) : []);
  const owner = searching ? (allVersions.flatMap((q) => q.data ?? []).find((v) => v.id === value)?.function ?? null) : null;
  useEffect(() => {
    if (owner !== null) setFunctionId(owner);
  }, [owner]);
  const versions = useRewardVersions(functionId);
  const summary = versions.data?.find((v) => v.id === value);
  const version = useRewardVersion(functionId, summary?.number ?? null).data;
  return (
    <div>
      <div className={ui.row} style={{ alignItems: "flex-start" }}>
        <SelectField label="Reward function"
          value={functionId ?? (value === BUILTIN_REWARD ? "builtin" : "")}
          onChange={(value) => {
            if (value === "builtin") {
              setFunctionId(null);
              onChange(BUILTIN_REWARD);
              return;
            }
            const id = value ? Number(value) : null;
            setFunctionId(id);
            // A function: its latest version, changeable below.
            onChange(functions.data?.find((f) => f.id === id)?.latest_version?.id ?? null);
          }}>
          <option value="">{emptyLabel}</option>
          {offerBuiltin ? <option value="builtin">The config&apos;s built-in reward</option> : null}
          {functions.data?.map((f) => (
            <option key={f.id} value={f.id}>
              {f.name}
            </option>
          ))}
        </SelectField>
        {functionId !== null ? (
          <SelectField label="Reward version" errors={errors} value={value ?? ""} onChange={(value) => onChange(value ? Number(value) : null)}>
            <option value="">Choose a version</option>
            {versions.data?.map((v) => (
              <option key={v.id} value={v.id}>
                v{v.number} {v.message ? `· ${v.message}` : ""}
              </option>
            ))}
          </SelectField>
        ) : errors.length ? (
          <span className={ui.fieldError} role="alert">
            {errors.join(" ")}
          </span>
        ) : null}
      </div>
      {version?.code ? (
        <pre className={ui.mono} aria-label="Reward code" style={{ maxHeight: 240, overflow: "auto", background: "var(--color-surface-muted)", padding: 8, borderRadius: 6 }}>
          {version.code}
        </pre>
      ) : null}
    </div>
  );
}
