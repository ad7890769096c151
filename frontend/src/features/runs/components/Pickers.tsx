import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useState } from "react";

import { Button } from "../../../components/Button";
import { Field, inputClass } from "../../../components/Field";
import { Loading } from "../../../components/Spinner";
import { useToast } from "../../../components/Toast";
import ui from "../../../components/ui.module.css";
import {
  addModel,
  getRewardVersion,
  listAvailableModels,
  listDatasets,
  listDatasetVersions,
  listModels,
  listRewardFunctions,
  listRewardVersions,
  previewDataset,
  runKeys,
  type Dataset,
  type DatasetVersion,
  type Model,
  type Validation,
} from "../api";

type PickerProps = { slug: string; value: number | null; onChange: (id: number | null) => void; errors: string[]; emptyLabel?: string };

/** "1.2B", "494M", "86K": a parameter count, short. */
export function formatParameters(count: unknown): string {
  if (typeof count !== "number" || !Number.isFinite(count)) return "unknown size";
  const units: [number, string][] = [
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "K"],
  ];
  for (const [size, unit] of units) if (count >= size) return `${Number((count / size).toPrecision(3))}${unit} parameters`;
  return `${count} parameters`;
}

function modelSummary(model: Model): string {
  const info = model.info as { architecture?: unknown; parameters?: unknown };
  const architecture = typeof info.architecture === "string" && info.architecture ? info.architecture : "unknown architecture";
  return `${architecture} · ${formatParameters(info.parameters)}`;
}

/** The policy to train: one of the project's models, or none (the preset's demo model). */
export function ModelPicker({ slug, value, onChange, errors, emptyLabel = "(the preset's demo model)" }: PickerProps) {
  const queryClient = useQueryClient();
  const toast = useToast();
  const models = useQuery({ queryKey: runKeys.models(slug), queryFn: ({ signal }) => listModels(slug, signal) });
  const none = models.data !== undefined && models.data.length === 0;
  const offered = useQuery({ queryKey: runKeys.availableModels(slug), queryFn: ({ signal }) => listAvailableModels(slug, signal), enabled: none });
  const add = useMutation({
    mutationFn: (folder: string) => addModel({ project: slug, folder }),
    onSuccess: (model) => {
      queryClient.setQueryData<Model[]>(runKeys.models(slug), (old) => [...(old ?? []), model]);
      void queryClient.invalidateQueries({ queryKey: runKeys.models(slug) });
      onChange(model.id);
      toast.show(`Model “${model.name}” added to the project.`, "success");
    },
    onError: (error) => toast.error(error),
  });
  const chosen = models.data?.find((m) => m.id === value);
  return (
    <div>
      <Field label="Model" help={chosen ? modelSummary(chosen) : "The policy the run trains."} errors={errors}>
        {(props) => (
          <select {...props} className={inputClass} value={value ?? ""} onChange={(e) => onChange(e.target.value ? Number(e.target.value) : null)}>
            <option value="">{emptyLabel}</option>
            {models.data?.map((m) => (
              <option key={m.id} value={m.id}>
                {m.name} ({m.kind})
              </option>
            ))}
          </select>
        )}
      </Field>
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
                <Button onClick={() => add.mutate(f.folder)} disabled={add.isPending}>
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

/** The project's datasets with every version of each (shared by the data pickers). */
export function useDatasetVersions(slug: string) {
  const datasets = useQuery({ queryKey: runKeys.datasets(slug), queryFn: ({ signal }) => listDatasets(slug, signal) });
  const versions = useQueries({
    queries: (datasets.data ?? []).map((d) => ({
      queryKey: runKeys.datasetVersions(d.id),
      queryFn: ({ signal }: { signal: AbortSignal }) => listDatasetVersions(d.id, signal),
    })),
  });
  const byDataset = new Map<number, DatasetVersion[]>();
  (datasets.data ?? []).forEach((d, i) => byDataset.set(d.id, [...(versions[i]?.data ?? [])].sort((a, b) => b.number - a.number)));
  return { datasets: datasets.data, versions: byDataset, isPending: datasets.isPending, error: datasets.error };
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
  const { datasets, versions, isPending } = useDatasetVersions(slug);
  const chosen = resolveChoice(value, datasets, versions);
  return (
    <div>
      <Field label="Training data" help="A dataset's latest version (recorded as that version when the run is created), or an exact version." errors={errors}>
        {(props) => (
          <select {...props} className={inputClass} value={choiceValue(value)} onChange={(e) => onChange(parseChoice(e.target.value))} required>
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
          </select>
        )}
      </Field>
      {chosen?.version ? <DatasetPreview dataset={chosen.dataset.id} number={chosen.version.number} /> : null}
    </div>
  );
}

function DatasetPreview({ dataset, number }: { dataset: number; number: number }) {
  const preview = useQuery({ queryKey: runKeys.preview(dataset, number), queryFn: ({ signal }) => previewDataset(dataset, number, signal) });
  if (preview.isPending) return <Loading what="a preview" />;
  if (!preview.data) return null;
  return (
    <div style={{ overflowX: "auto", marginBottom: 12 }}>
      <table className={ui.mono} aria-label="Dataset preview" style={{ borderCollapse: "collapse" }}>
        <thead>
          <tr>
            {preview.data.columns.map((c) => (
              <th key={c} style={{ textAlign: "left", padding: "2px 8px" }}>
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {preview.data.rows.map((row, i) => (
            <tr key={i}>
              {preview.data.columns.map((c) => (
                <td key={c} style={{ padding: "2px 8px", maxWidth: 320, overflow: "hidden", textOverflow: "ellipsis", whiteSpace: "nowrap" }}>
                  {typeof row[c] === "string" ? (row[c] as string) : JSON.stringify(row[c])}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
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
  const { datasets, versions } = useDatasetVersions(slug);
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
          <Field label="Validation version" errors={versionErrors}>
            {(props) => (
              <select {...props} className={inputClass} value={version ?? ""} onChange={(e) => onChange("dataset_version", e.target.value ? Number(e.target.value) : null)}>
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
              </select>
            )}
          </Field>
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
  const models = useQuery({ queryKey: runKeys.models(slug), queryFn: ({ signal }) => listModels(slug, signal) });
  const rewardModels = (models.data ?? []).filter((m) => m.role === "reward");
  const chosen = typeof value === "number" ? rewardModels.find((m) => m.id === value) : undefined;
  return (
    <Field
      label="Reward model"
      help={chosen ? modelSummary(chosen) : "A model that scores responses beside (or instead of) the reward function."}
      errors={errors}
    >
      {(props) => (
        <select
          {...props}
          className={inputClass}
          value={String(value)}
          onChange={(e) => onChange(e.target.value === "default" || e.target.value === "none" ? e.target.value : Number(e.target.value))}
        >
          <option value="default">{defaultLabel}</option>
          <option value="none">No reward model</option>
          {rewardModels.map((m) => (
            <option key={m.id} value={m.id}>
              {m.name} ({m.kind})
            </option>
          ))}
        </select>
      )}
    </Field>
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
  emptyLabel = "(the config's built-in reward)",
  offerBuiltin = false,
}: PickerProps & { offerBuiltin?: boolean }) {
  const [functionId, setFunctionId] = useState<number | null>(null);
  const functions = useQuery({ queryKey: runKeys.rewards(slug), queryFn: ({ signal }) => listRewardFunctions(slug, signal) });
  // A preselected version (?reward_version=ID, a clone's): find its function among all of them.
  const searching = value !== null && value !== BUILTIN_REWARD && functionId === null;
  const allVersions = useQueries({
    queries: (searching ? (functions.data ?? []) : []).map((f) => ({
      queryKey: runKeys.rewardVersions(f.id),
      queryFn: ({ signal }: { signal: AbortSignal }) => listRewardVersions(f.id, signal),
    })),
  });
  const owner = searching ? (allVersions.flatMap((q) => q.data ?? []).find((v) => v.id === value)?.function ?? null) : null;
  useEffect(() => {
    if (owner !== null) setFunctionId(owner);
  }, [owner]);
  const versions = useQuery({
    queryKey: runKeys.rewardVersions(functionId ?? 0),
    queryFn: ({ signal }) => listRewardVersions(functionId ?? 0, signal),
    enabled: functionId !== null,
  });
  const summary = versions.data?.find((v) => v.id === value);
  const version = useQuery({
    queryKey: runKeys.rewardVersion(functionId ?? 0, summary?.number ?? 0),
    queryFn: ({ signal }) => getRewardVersion(functionId ?? 0, summary?.number ?? 0, signal),
    enabled: functionId !== null && summary !== undefined,
  }).data;
  return (
    <div>
      <div className={ui.row} style={{ alignItems: "flex-start" }}>
        <Field label="Reward function">
          {(props) => (
            <select
              {...props}
              className={inputClass}
              value={functionId ?? (value === BUILTIN_REWARD ? "builtin" : "")}
              onChange={(e) => {
                if (e.target.value === "builtin") {
                  setFunctionId(null);
                  onChange(BUILTIN_REWARD);
                  return;
                }
                const id = e.target.value ? Number(e.target.value) : null;
                setFunctionId(id);
                // A function: its latest version, changeable below.
                onChange(functions.data?.find((f) => f.id === id)?.latest_version?.id ?? null);
              }}
            >
              <option value="">{emptyLabel}</option>
              {offerBuiltin ? <option value="builtin">The config&apos;s built-in reward</option> : null}
              {functions.data?.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        {functionId !== null ? (
          <Field label="Reward version" errors={errors}>
            {(props) => (
              <select {...props} className={inputClass} value={value ?? ""} onChange={(e) => onChange(e.target.value ? Number(e.target.value) : null)}>
                <option value="">Choose a version</option>
                {versions.data?.map((v) => (
                  <option key={v.id} value={v.id}>
                    v{v.number} {v.message ? `· ${v.message}` : ""}
                  </option>
                ))}
              </select>
            )}
          </Field>
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
