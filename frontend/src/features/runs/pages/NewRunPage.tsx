import { useEffect, useMemo, useState, type FormEvent } from "react";
import { useNavigate, useSearchParams } from "react-router";
import YAML from "yaml";

import { errorMessage, FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { Field, fieldErrorsAt, inputClass, SelectField, TextField } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { useToast } from "../../../components/Toast";
import ui from "../../../components/ui.module.css";
import { useProjectDatasetVersions } from "../../datasets/hooks";
import { useProjectSlug } from "../../projects/hooks";
import type { ConfigValidation, Preset, PresetName, RunClone, RunDetail, Validation } from "../api";
import { ConfigForm } from "../components/ConfigForm";
import { CriticModelPicker, kindInputsRequest, LoraAdapterPicker } from "../components/InputKindPickers";
import {
  BUILTIN_REWARD,
  choiceValue,
  DatasetPicker,
  ModelPicker,
  resolveChoice,
  RewardModelPicker,
  rewardModelsRequest,
  RewardVersionPicker,
  ValidationPicker,
  type DatasetChoice,
  type RewardModelChoice,
} from "../components/Pickers";
import { useConfigSchema, usePresets, useRun, useStartRun, useValidateConfig, type StartRun } from "../hooks";
import { changedTree, isTree, type ConfigTree } from "../lib/configDiff";
import { pathFieldsOf, sectionsOf, setAt } from "../lib/configSchema";
import styles from "./NewRunPage.module.css";

const DEFAULT_PRESET = "grpo-tiny-arith";
/** The run's own request fields, besides its inputs. */
type RunField = "name" | "config" | "overrides" | "priority" | "resources" | "tags" | "notes";
/** The input request fields (the server's registry of input kinds, through the generated
 * schema): a kind added there fails this check until the form shows its errors. */
const INPUT_FIELDS = {
  model: true,
  dataset: true,
  dataset_version: true,
  validation: true,
  validation_version: true,
  reward_version: true,
  builtin_reward: true,
  reward_models: true,
  critic_model: true,
  lora_adapter: true,
} satisfies Record<Exclude<keyof RunClone, RunField>, true>;
/** Request fields this form shows errors at (config.* paths are shown in the config form). */
const FORM_FIELDS = new Set([
  "name",
  "preset",
  "tags",
  "priority",
  "overrides",
  "resources.cpus",
  "resources.gpus",
  ...Object.keys(INPUT_FIELDS),
  "reward_models.reward.model.path",
]);

function pad(n: number): string {
  return String(n).padStart(2, "0");
}

/** A name to start from: `<dataset>-<preset>-<MMDD-HHmm>`. */
export function suggestedName(dataset: string | null, preset: string, at: Date): string {
  const stamp = `${pad(at.getMonth() + 1)}${pad(at.getDate())}-${pad(at.getHours())}${pad(at.getMinutes())}`;
  const slug = (text: string) => text.toLowerCase().replace(/[^a-z0-9._]+/g, "-").replace(/^-+|-+$/g, "");
  return [dataset ? slug(dataset) : "", slug(preset), stamp].filter(Boolean).join("-");
}

/** `/p/:slug/runs/new` (a new run from a preset) and `?clone=ID` (clone with edits);
 * `?reward_version=ID&dataset_version=ID` preselect versions ("Train on this"). */
export function NewRunPage() {
  const [params] = useSearchParams();
  const cloneId = params.get("clone") ? Number(params.get("clone")) : null;
  const schema = useConfigSchema();
  const presets = usePresets();
  const parent = useRun(cloneId ?? 0, cloneId !== null);
  const failed = schema.error ?? presets.error ?? parent.error;
  if (failed) return <ErrorState title="Could not load the run form" error={failed} onRetry={() => void Promise.all([schema.refetch(), presets.refetch()])} />;
  if (!schema.data || !presets.data || (cloneId !== null && !parent.data)) return <Loading what="the run form" />;
  return <RunForm schema={schema.data} presets={presets.data} parent={parent.data ?? null} initialPreset={params.get("preset")} initial={chosenIn(params)} />;
}

type Preselected = { datasetVersion: number | null; rewardVersion: number | null };

function idParam(params: URLSearchParams, name: string): number | null {
  const value = Number(params.get(name));
  return Number.isInteger(value) && value > 0 ? value : null;
}

function chosenIn(params: URLSearchParams): Preselected {
  return { datasetVersion: idParam(params, "dataset_version"), rewardVersion: idParam(params, "reward_version") };
}

type Inputs = { model: number | null; dataset: DatasetChoice; validation: Validation; validationVersion: number | null; rewardVersion: number | null };

/** The inputs the form starts with: the parent's (a clone), else those in the URL. */
function inheritedInputs(parent: RunDetail | null, initial: Preselected): Inputs {
  if (!parent) {
    return {
      model: null,
      dataset: initial.datasetVersion !== null ? { version: initial.datasetVersion } : null,
      validation: "held_out",
      validationVersion: null,
      rewardVersion: initial.rewardVersion,
    };
  }
  return {
    model: parent.model,
    dataset: parent.dataset_version !== null ? { version: parent.dataset_version } : null,
    // "config": a run from before validation was a choice; its clone holds out rows.
    validation: parent.validation === "config" ? "held_out" : parent.validation,
    validationVersion: parent.validation_version,
    rewardVersion: parent.reward_version,
  };
}

type RunFormProps = { schema: Record<string, unknown>; presets: Preset[]; parent: RunDetail | null; initialPreset: string | null; initial: Preselected };

function mergeTrees(base: ConfigTree, over: ConfigTree): ConfigTree {
  const out: ConfigTree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const b = out[key];
    out[key] = isTree(value) && isTree(b) ? mergeTrees(b, value) : value;
  }
  return out;
}

function RunForm({ schema, presets, parent, initialPreset, initial }: RunFormProps) {
  const slug = useProjectSlug();
  const navigate = useNavigate();
  const toast = useToast();
  const sections = useMemo(() => sectionsOf(schema), [schema]);
  const [presetName, setPresetName] = useState<string>(
    parent?.preset || (initialPreset && presets.some((p) => p.name === initialPreset) ? initialPreset : presets.some((p) => p.name === DEFAULT_PRESET) ? DEFAULT_PRESET : (presets[0]?.name ?? "")),
  );
  const presetConfig = (presets.find((p) => p.name === presetName)?.config ?? {}) as ConfigTree;
  const base: ConfigTree = parent ? (parent.config as ConfigTree) : presetConfig;
  const baseName = parent ? `run #${parent.id}` : `preset ${presetName}`;
  const [config, setConfig] = useState<ConfigTree>(base);
  // null: the suggested name (shown in the field, editable); emptied, it comes back.
  const [name, setName] = useState<string | null>(parent ? `${parent.name}-clone` : null);
  const [startedAt] = useState(() => new Date());
  const [tags, setTags] = useState(parent ? parent.tags.join(", ") : "");
  const [priority, setPriority] = useState(String(parent?.priority ?? 0));
  const [cpus, setCpus] = useState(parent?.resources.cpus !== undefined ? String(parent.resources.cpus) : "");
  const [gpus, setGpus] = useState(parent?.resources.gpus !== undefined ? String(parent.resources.gpus) : "");
  // The run's inputs; a clone starts from its parent's and sends only what changed.
  const inherited = useMemo(() => inheritedInputs(parent, initial), [parent, initial]);
  const [model, setModel] = useState<number | null>(inherited.model);
  const [dataset, setDataset] = useState<DatasetChoice>(inherited.dataset);
  const [validation, setValidation] = useState<Validation>(inherited.validation);
  const [validationVersion, setValidationVersion] = useState<number | null>(inherited.validationVersion);
  const [rewardVersion, setRewardVersion] = useState<number | null>(inherited.rewardVersion);
  const [rewardModel, setRewardModel] = useState<RewardModelChoice>("default");
  const [criticModel, setCriticModel] = useState<number | null>(null);
  const [loraAdapter, setLoraAdapter] = useState<number | null>(null);
  const [datasetMissing, setDatasetMissing] = useState(false);
  const data = useProjectDatasetVersions(slug);
  // A project with one dataset: its latest version, shown chosen (a new user's first run).
  const onlyDataset = data.datasets?.length === 1 && data.datasets[0]?.latest_version ? data.datasets[0] : null;
  useEffect(() => {
    if (!parent && onlyDataset && initial.datasetVersion === null) setDataset((d) => d ?? { dataset: onlyDataset.id });
  }, [parent, onlyDataset, initial.datasetVersion]);
  const chosenData = resolveChoice(dataset, data.datasets, data.versions);
  const suggestion = suggestedName(chosenData?.dataset.name ?? null, parent?.preset || presetName, startedAt);
  const pathFields = useMemo(() => pathFieldsOf(schema), [schema]);
  const [overrides, setOverrides] = useState("");
  const [yamlText, setYamlText] = useState("");
  const [yamlError, setYamlError] = useState("");
  const [editingYaml, setEditingYaml] = useState(false);

  // The YAML view shows what differs from the base; the form and it stay in sync.
  const changed = useMemo(() => changedTree(config, base), [config, base]);
  useEffect(() => {
    if (!editingYaml) setYamlText(Object.keys(changed).length ? YAML.stringify(changed) : "");
  }, [changed, editingYaml]);

  const overrideLines = overrides.split("\n").map((l) => l.trim()).filter(Boolean);
  const submit = useStartRun();
  /** The request the form describes: only the inputs the user changed, for a clone. */
  function startRequest(): StartRun {
    {
      const resources = { ...(cpus !== "" ? { cpus: Number(cpus) } : {}), ...(gpus !== "" ? { gpus: Number(gpus) } : {}) };
      const common = {
        name: name ?? suggestion,
        config: changed,
        overrides: overrideLines,
        priority: Number(priority),
        tags: tags.split(",").map((t) => t.trim()).filter(Boolean),
        ...(Object.keys(resources).length ? { resources } : {}),
      };
      const chosen: Required<Pick<RunClone, "model" | "dataset" | "dataset_version" | "validation" | "validation_version" | "reward_version">> = {
        model,
        dataset: dataset && "dataset" in dataset ? dataset.dataset : null,
        dataset_version: dataset && "version" in dataset ? dataset.version : null,
        validation,
        validation_version: validation === "dataset_version" ? validationVersion : null,
        reward_version: rewardVersion === BUILTIN_REWARD ? null : rewardVersion,
      };
      if (parent) {
        // Only the inputs the user changed: the server keeps the parent's others.
        const changedInputs: RunClone = {};
        if (model !== inherited.model && model !== null) changedInputs.model = model;
        if (choiceValue(dataset) !== choiceValue(inherited.dataset)) Object.assign(changedInputs, { dataset: chosen.dataset ?? undefined, dataset_version: chosen.dataset_version ?? undefined });
        if (validation !== inherited.validation || (validation === "dataset_version" && validationVersion !== inherited.validationVersion)) {
          changedInputs.validation = validation;
          if (validation === "dataset_version" && validationVersion !== null) changedInputs.validation_version = validationVersion;
        }
        if (rewardVersion === BUILTIN_REWARD) changedInputs.builtin_reward = true;
        else if (rewardVersion !== inherited.rewardVersion && rewardVersion !== null) changedInputs.reward_version = rewardVersion;
        const rewardModels = rewardModelsRequest(rewardModel);
        if (rewardModels !== undefined) changedInputs.reward_models = rewardModels;
        Object.assign(changedInputs, kindInputsRequest(schema, config, { criticModel, loraAdapter }));
        return { clone: parent.id, body: { ...common, ...changedInputs } };
      }
      const inputs = Object.fromEntries(Object.entries(chosen).filter(([key, value]) => value !== null && !(key === "validation" && value === "held_out")));
      const rewardModels = rewardModelsRequest(rewardModel);
      return { clone: null, body: { ...common, ...inputs, ...(rewardModels !== undefined ? { reward_models: rewardModels } : {}), ...kindInputsRequest(schema, config, { criticModel, loraAdapter }), project: slug, preset: presetName as PresetName } };
    }
  }
  const submitted = {
    onSuccess: (run: RunDetail) => {
      toast.show(`Run “${run.name}” created.`, "success");
      void navigate(`/p/${slug}/runs/${run.id}`);
    },
    onError: (error: Error) => {
      // Errors shown at a field need no toast; anything else (or a field the form lacks) does.
      const shown = error instanceof FieldErrors && Object.keys(error.fields).every((k) => k.startsWith("config.") || FORM_FIELDS.has(k));
      if (!shown) toast.error(error);
    },
  };
  const translate = useValidateConfig();
  const translated = {
    onSuccess: (answer: ConfigValidation) => {
      if (answer.valid && answer.config) {
        setConfig(answer.config as ConfigTree);
        setOverrides("");
        toast.show("Overrides applied to the form.", "success");
      }
    },
    onError: (error: Error) => toast.error(error),
  };

  // Server errors by config path: from the run create/clone answer or the overrides check.
  const configErrors: Record<string, string[]> = {};
  const validationErrors = translate.data && !translate.data.valid ? (translate.data.errors ?? {}) : {};
  const serverFields = submit.error instanceof FieldErrors ? submit.error.fields : {};
  for (const [key, messages] of Object.entries({ ...serverFields, ...validationErrors })) {
    if (key === "config") configErrors[""] = messages; // a rule across groups
    else if (key.startsWith("config.")) configErrors[key.slice("config.".length)] = messages;
  }
  const overrideErrors = [...fieldErrorsAt(submit.error, "overrides"), ...(validationErrors.overrides ?? [])];
  // verl keys that only tune speed (and the like): applied as nothing, each shown with why.
  const ignoredOverrides = translate.data?.valid ? (translate.data.ignored ?? []) : [];

  useEffect(() => {
    if (!(submit.error instanceof FieldErrors)) return;
    const field = document.querySelector<HTMLElement>('[aria-invalid="true"]');
    // No field to focus (a refused path from the YAML): show the alert above the config.
    if (field) field.focus();
    else document.querySelector<HTMLElement>('form [role="alert"]')?.scrollIntoView({ block: "center" });
  }, [submit.error]);

  function onPresetChange(next: string) {
    setPresetName(next);
    const nextConfig = (presets.find((p) => p.name === next)?.config ?? {}) as ConfigTree;
    setConfig(mergeTrees(nextConfig, changed));
  }

  function onYamlBlur() {
    setEditingYaml(false);
    try {
      const parsed: unknown = yamlText.trim() ? YAML.parse(yamlText) : {};
      if (!isTree(parsed)) throw new Error("The YAML must be a mapping of config groups, e.g. `rollout: {n: 8}`.");
      setConfig(mergeTrees(base, parsed));
      setYamlError("");
    } catch (error) {
      setYamlError(errorMessage(error));
    }
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!dataset) {
      // Required: say so at the field instead of asking the server.
      setDatasetMissing(true);
      document.getElementById("training-data")?.querySelector("select")?.focus();
      return;
    }
    submit.mutate(startRequest(), submitted);
  }

  const datasetErrors = [
    ...(datasetMissing && !dataset ? ["Choose the training data: a dataset's latest version or an exact version."] : []),
    ...fieldErrorsAt(submit.error, "dataset"),
    ...fieldErrorsAt(submit.error, "dataset_version"),
  ];

  return (
    <form onSubmit={onSubmit} noValidate aria-label={parent ? "Clone run" : "New run"}>
      <PageHeader
        title={parent ? `Clone ${parent.name}` : "New run"}
        description={parent ? `Starts from run #${parent.id}'s config; change what you like.` : "Choose a preset, change what you like, and start training."}
        actions={
          <Button type="submit" variant="primary" disabled={submit.isPending}>
            {submit.isPending ? "Creating…" : parent ? "Create clone" : "Create run"}
          </Button>
        }
      />
      <div className={styles.layout}>
        <div>
          <div className={styles.block}>
            <div className={ui.row} style={{ alignItems: "flex-start" }}>
              <TextField label="Run name" errors={fieldErrorsAt(submit.error, "name")}
                    value={name ?? suggestion}
                    onChange={setName}
                    onBlur={() => setName((n) => (n === "" ? null : n))}
                    placeholder={suggestion}
                    maxLength={200}
                    style={{ minWidth: 280 }} />
              {parent ? null : (
                <SelectField label="Preset" help="A named config the form starts from." errors={fieldErrorsAt(submit.error, "preset")} value={presetName} onChange={(value) => onPresetChange(value)}>
                  {presets.map((p) => (
                    <option key={p.name}>{p.name}</option>
                  ))}
                </SelectField>
              )}
              <TextField label="Tags" help="Comma-separated." errors={fieldErrorsAt(submit.error, "tags")} value={tags} onChange={setTags} />
            </div>
          </div>
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Inputs</h2>
            {parent ? <p className={ui.muted}>Run #{parent.id}&apos;s inputs are chosen; change any of them.</p> : null}
            <ModelPicker slug={slug} value={model} onChange={setModel} errors={fieldErrorsAt(submit.error, "model")} emptyLabel={parent ? "(the parent's model)" : undefined} />
            <div id="training-data">
              <DatasetPicker
                slug={slug}
                value={dataset}
                onChange={(choice) => {
                  setDataset(choice);
                  setDatasetMissing(false);
                }}
                errors={datasetErrors}
              />
            </div>
            <ValidationPicker
              slug={slug}
              value={validation}
              version={validationVersion}
              onChange={(next, version) => {
                setValidation(next);
                setValidationVersion(version);
              }}
              errors={fieldErrorsAt(submit.error, "validation")}
              versionErrors={fieldErrorsAt(submit.error, "validation_version")}
            />
            <RewardVersionPicker
              slug={slug}
              value={rewardVersion}
              onChange={setRewardVersion}
              errors={fieldErrorsAt(submit.error, "reward_version")}
              emptyLabel={parent?.reward_version ? "(the parent's reward version)" : undefined}
              offerBuiltin={Boolean(parent?.reward_version)}
            />
            <RewardModelPicker
              slug={slug}
              value={rewardModel}
              onChange={setRewardModel}
              errors={[...fieldErrorsAt(submit.error, "reward_models"), ...fieldErrorsAt(submit.error, "reward_models.reward.model.path")]}
              defaultLabel={parent ? "(the parent's reward model, if any)" : "(the preset's reward model, if any)"}
            />
            <CriticModelPicker slug={slug} schema={schema} config={config} parent={parent} value={criticModel} onChange={setCriticModel} errors={fieldErrorsAt(submit.error, "critic_model")} />
            <LoraAdapterPicker slug={slug} config={config} parent={parent} value={loraAdapter} onChange={setLoraAdapter} errors={fieldErrorsAt(submit.error, "lora_adapter")} />
          </div>
          <h2 className={styles.blockTitle}>Config</h2>
          <ConfigForm
            sections={sections}
            value={config}
            base={base}
            errors={configErrors}
            onChange={(path, value) => setConfig((c) => setAt(c, path, value))}
            baseName={baseName}
            pathFields={pathFields}
          />
        </div>
        <aside className={styles.side} aria-label="Resources, YAML and overrides">
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Resources and priority</h2>
            <div className={ui.row} style={{ alignItems: "flex-start" }}>
              <TextField label="CPUs" errors={fieldErrorsAt(submit.error, "resources.cpus")} style={{ width: 80 }} inputMode="decimal" value={cpus} onChange={setCpus} placeholder="auto" />
              <TextField label="GPUs" errors={fieldErrorsAt(submit.error, "resources.gpus")} style={{ width: 80 }} inputMode="decimal" value={gpus} onChange={setGpus} placeholder="auto" />
              <TextField label="Priority" help="Higher starts first." errors={fieldErrorsAt(submit.error, "priority")} style={{ width: 80 }} inputMode="numeric" value={priority} onChange={setPriority} />
            </div>
          </div>
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Changes as YAML</h2>
            <Field label={`What differs from ${baseName}`} help="Edit here or in the form: they stay in sync." errors={yamlError ? [yamlError] : []}>
              {(props) => (
                <textarea
                  {...props}
                  className={`${inputClass} ${styles.code}`}
                  rows={8}
                  value={yamlText}
                  placeholder={"rollout:\n  n: 8"}
                  onFocus={() => setEditingYaml(true)}
                  onChange={(e) => setYamlText(e.target.value)}
                  onBlur={onYamlBlur}
                />
              )}
            </Field>
          </div>
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Overrides</h2>
            <Field label="key=value, one per line" help="Ours (actor.optim.lr=1e-6) or verl's (actor_rollout_ref.rollout.n=8): applied to the form through the studio's translator." errors={overrideErrors}>
              {(props) => (
                <textarea {...props} className={`${inputClass} ${styles.code}`} rows={4} value={overrides} onChange={(e) => setOverrides(e.target.value)} placeholder="actor_rollout_ref.rollout.n=8" />
              )}
            </Field>
            <Button onClick={() => translate.mutate({ config, overrides: overrideLines }, translated)} disabled={!overrideLines.length || translate.isPending}>
              Apply overrides to the form
            </Button>
            {ignoredOverrides.length > 0 && (
              <div role="status" aria-label="Ignored verl overrides" className={ui.muted}>
                <p>verl overrides accepted with no effect here:</p>
                <ul>
                  {ignoredOverrides.map((item) => (
                    <li key={item.key}>
                      <code className={ui.mono}>{item.key}</code>: {item.reason}
                    </li>
                  ))}
                </ul>
              </div>
            )}
          </div>
        </aside>
      </div>
    </form>
  );
}
