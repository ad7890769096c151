import { zodResolver } from "@hookform/resolvers/zod";
import { useEffect, useMemo, useState } from "react";
import { Controller, useForm, useWatch } from "react-hook-form";
import { useNavigate, useSearchParams } from "react-router";

import { Button } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { Field, inputClass, SelectField, TextField } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { useToast } from "../../../components/Toast";
import ui from "../../../components/ui.module.css";
import { messagesAt, placeFieldErrors, placeServerErrors } from "../../../lib/serverErrors";
import { useProjectDatasetVersions } from "../../datasets/hooks";
import { StorageQuotaNotice } from "../../projects/components/StorageMeter";
import { useProjectSlug } from "../../projects/hooks";
import type { ConfigValidation, Preset, RunDetail } from "../api";
import { ConfigForm } from "../components/ConfigForm";
import { KindPicker } from "../components/InputKindPickers";
import { DatasetPicker, ModelPicker, resolveChoice, RewardModelPicker, RewardVersionPicker, ValidationPicker } from "../components/Pickers";
import { useConfigSchema, usePresets, useRun, useStartRun, useValidateConfig } from "../hooks";
import type { ConfigTree } from "../lib/configDiff";
import { useConfigDraft } from "../lib/configDraft";
import { pathFieldsOf, sectionsOf } from "../lib/configSchema";
import { INPUT_KINDS, kindInputsRequest } from "../lib/inputKinds";
import { initialRunForm, overrideLines, runFieldOf, runFormSchema, runRequest, type Preselected, type RunFormValues, type ValidRunForm } from "../lib/runForm";
import styles from "./NewRunPage.module.css";

const DEFAULT_PRESET = "grpo-tiny-arith";

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

function withoutKey<T>(record: Record<string, T>, key: string): Record<string, T> {
  const rest = { ...record };
  delete rest[key];
  return rest;
}

function idParam(params: URLSearchParams, name: string): number | null {
  const value = Number(params.get(name));
  return Number.isInteger(value) && value > 0 ? value : null;
}

function chosenIn(params: URLSearchParams): Preselected {
  return { datasetVersion: idParam(params, "dataset_version"), rewardVersion: idParam(params, "reward_version") };
}

type RunFormProps = { schema: Record<string, unknown>; presets: Preset[]; parent: RunDetail | null; initialPreset: string | null; initial: Preselected };

function firstPreset(presets: Preset[], asked: string | null): string {
  const known = (name: string | null) => name !== null && presets.some((p) => p.name === name);
  if (known(asked)) return asked as string;
  return known(DEFAULT_PRESET) ? DEFAULT_PRESET : (presets[0]?.name ?? "");
}

function RunForm({ schema, presets, parent, initialPreset, initial }: RunFormProps) {
  const slug = useProjectSlug();
  const navigate = useNavigate();
  const toast = useToast();
  const sections = useMemo(() => sectionsOf(schema), [schema]);
  const pathFields = useMemo(() => pathFieldsOf(schema), [schema]);
  const presetConfig = (name: string) => (presets.find((p) => p.name === name)?.config ?? {}) as ConfigTree;
  const form = useForm<RunFormValues, unknown, ValidRunForm>({
    resolver: zodResolver(runFormSchema),
    defaultValues: initialRunForm(parent, firstPreset(presets, initialPreset), initial),
    // Focus is moved to the first field showing an error (the `focusRequest` effect): several
    // pickers are composite controls that hold no ref of their own.
    shouldFocusError: false,
  });
  const { control, setError, setValue, getValues, handleSubmit, formState } = form;
  const { errors } = formState;
  const [presetName, dataset, validationVersion, overrides] = useWatch({ control, name: ["preset", "dataset", "validation_version", "overrides"] });
  const baseName = parent ? `run #${parent.id}` : `preset ${presetName}`;
  const { draft, changed, yamlText, dispatch } = useConfigDraft(parent ? (parent.config as ConfigTree) : presetConfig(presetName));
  const [startedAt] = useState(() => new Date());
  const data = useProjectDatasetVersions(slug);
  // A project with one dataset: its latest version, shown chosen (a new user's first run).
  const onlyDataset = data.datasets?.length === 1 && data.datasets[0]?.latest_version ? data.datasets[0] : null;
  useEffect(() => {
    if (!parent && onlyDataset && initial.datasetVersion === null && getValues("dataset") === null) setValue("dataset", { dataset: onlyDataset.id });
  }, [parent, onlyDataset, initial.datasetVersion, getValues, setValue]);
  const chosenData = resolveChoice(dataset, data.datasets, data.versions);
  const suggestion = suggestedName(chosenData?.dataset.name ?? null, parent?.preset || presetName, startedAt);
  // The suggestion shown while the name field has focus: it follows the dataset chosen, but
  // never under someone editing it (a dataset chosen meanwhile would replace the text they
  // had selected to type over, and put the caret after it).
  const [heldSuggestion, setHeldSuggestion] = useState<string | null>(null);

  // Errors the form's fields do not show: config paths (the config form shows them, "config"
  // alone is a rule across groups) from the create answer or the overrides check.
  const [configErrors, setConfigErrors] = useState<Record<string, string[]>>({});
  // Moves focus to the first field in error once the errors are on screen.
  const [focusRequest, setFocusRequest] = useState(0);
  useEffect(() => {
    if (focusRequest === 0) return;
    const field = document.querySelector<HTMLElement>('form [aria-invalid="true"]');
    // No field to focus (a refused path from the YAML): show the alert above the config.
    if (field) field.focus();
    else document.querySelector<HTMLElement>('form [role="alert"]')?.scrollIntoView({ block: "center" });
  }, [focusRequest]);

  /** Server messages no form field took: config paths to the config form, the rest reported. */
  function showRest(rest: Record<string, string[]>): boolean {
    const config: Record<string, string[]> = {};
    let unshown = false;
    for (const [key, messages] of Object.entries(rest)) {
      if (key === "config") config[""] = messages;
      else if (key.startsWith("config.")) config[key.slice("config.".length)] = messages;
      else unshown = true;
    }
    setConfigErrors(config);
    return unshown;
  }

  const submit = useStartRun();
  const onValid = (values: ValidRunForm) => {
    setConfigErrors({});
    const kinds = kindInputsRequest(INPUT_KINDS, draft.config, values.kinds);
    submit.mutate(runRequest(values, { parent, initial, suggestion, config: changed, project: slug, kinds }), {
      onSuccess: (run: RunDetail) => {
        toast.show(`Run “${run.name}” created.`, "success");
        void navigate(`/p/${slug}/runs/${run.id}`);
      },
      onError: (error: Error) => {
        // Errors shown at a field need no toast; anything else (or a field the form lacks) does.
        if (showRest(placeServerErrors(error, setError, runFieldOf))) toast.error(error);
        setFocusRequest((n) => n + 1);
      },
    });
  };

  const translate = useValidateConfig();
  const onTranslated = (answer: ConfigValidation) => {
    if (answer.valid && answer.config) {
      dispatch({ type: "replace", config: answer.config as ConfigTree });
      setValue("overrides", "");
      form.clearErrors("overrides");
      setConfigErrors({});
      toast.show("Overrides applied to the form.", "success");
    } else if (!answer.valid) {
      showRest(placeFieldErrors(answer.errors ?? {}, setError, runFieldOf));
    }
  };
  // verl keys that only tune speed (and the like): applied as nothing, each shown with why.
  const ignoredOverrides = translate.data?.valid ? (translate.data.ignored ?? []) : [];

  function onPresetChange(next: string) {
    setValue("preset", next);
    dispatch({ type: "rebase", base: presetConfig(next) });
  }

  const at = (path: string) => messagesAt(errors, path);

  return (
    <form onSubmit={(event) => void handleSubmit(onValid, () => setFocusRequest((n) => n + 1))(event)} noValidate aria-label={parent ? "Clone run" : "New run"}>
      <PageHeader
        title={parent ? `Clone ${parent.name}` : "New run"}
        description={parent ? `Starts from run #${parent.id}'s config; change what you like.` : "Choose a preset, change what you like, and start training."}
        actions={
          <Button type="submit" variant="primary" disabled={submit.isPending}>
            {submit.isPending ? "Creating…" : parent ? "Create clone" : "Create run"}
          </Button>
        }
      />
      <StorageQuotaNotice slug={slug} />
      <div className={styles.layout}>
        <div>
          <div className={styles.block}>
            <div className={ui.row} style={{ alignItems: "flex-start" }}>
              <Controller
                control={control}
                name="name"
                render={({ field }) => (
                  <TextField
                    label="Run name"
                    errors={at("name")}
                    value={field.value ?? heldSuggestion ?? suggestion}
                    onChange={field.onChange}
                    onFocus={() => setHeldSuggestion(suggestion)}
                    onBlur={() => {
                      setHeldSuggestion(null);
                      if (field.value === "") field.onChange(null);
                      field.onBlur();
                    }}
                    placeholder={suggestion}
                    maxLength={200}
                    style={{ minWidth: 280 }}
                  />
                )}
              />
              {parent ? null : (
                <SelectField label="Preset" help="A named config the form starts from." errors={at("preset")} value={presetName} onChange={onPresetChange}>
                  {presets.map((p) => (
                    <option key={p.name}>{p.name}</option>
                  ))}
                </SelectField>
              )}
              <Controller control={control} name="tags" render={({ field }) => <TextField label="Tags" help="Comma-separated." errors={at("tags")} {...field} />} />
            </div>
          </div>
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Inputs</h2>
            {parent ? <p className={ui.muted}>Run #{parent.id}&apos;s inputs are chosen; change any of them.</p> : null}
            <Controller
              control={control}
              name="model"
              render={({ field }) => <ModelPicker slug={slug} value={field.value} onChange={field.onChange} errors={at("model")} emptyLabel={parent ? "(the parent's model)" : undefined} />}
            />
            <Controller control={control} name="dataset" render={({ field }) => <DatasetPicker slug={slug} value={field.value} onChange={field.onChange} errors={at("dataset")} />} />
            <Controller
              control={control}
              name="validation"
              render={({ field }) => (
                <ValidationPicker
                  slug={slug}
                  value={field.value}
                  version={validationVersion}
                  onChange={(next, version) => {
                    field.onChange(next);
                    setValue("validation_version", version, { shouldValidate: formState.isSubmitted });
                  }}
                  errors={at("validation")}
                  versionErrors={at("validation_version")}
                />
              )}
            />
            <Controller
              control={control}
              name="reward_version"
              render={({ field }) => (
                <RewardVersionPicker
                  slug={slug}
                  value={field.value}
                  onChange={field.onChange}
                  errors={at("reward_version")}
                  emptyLabel={parent?.reward_version ? "(the parent's reward version)" : undefined}
                  offerBuiltin={Boolean(parent?.reward_version)}
                />
              )}
            />
            <Controller
              control={control}
              name="reward_models"
              render={({ field }) => (
                <RewardModelPicker
                  slug={slug}
                  value={field.value}
                  onChange={field.onChange}
                  errors={at("reward_models")}
                  defaultLabel={parent ? "(the parent's reward model, if any)" : "(the preset's reward model, if any)"}
                />
              )}
            />
            {INPUT_KINDS.map((kind) => (
              <Controller
                key={kind.field}
                control={control}
                name={`kinds.${kind.field}`}
                render={({ field }) => (
                  <KindPicker slug={slug} kind={kind} config={draft.config} parent={parent} value={field.value ?? null} onChange={field.onChange} errors={at(`kinds.${kind.field}`)} />
                )}
              />
            ))}
          </div>
          <h2 className={styles.blockTitle}>Config</h2>
          <ConfigForm
            sections={sections}
            value={draft.config}
            base={draft.base}
            errors={configErrors}
            onChange={(path, value) => {
              dispatch({ type: "edit", path, value });
              // Editing a field clears the server's word on it, as the form's own fields do.
              setConfigErrors((shown) => (path in shown ? withoutKey(shown, path) : shown));
            }}
            baseName={baseName}
            pathFields={pathFields}
          />
        </div>
        <aside className={styles.side} aria-label="Resources, YAML and overrides">
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Resources and priority</h2>
            <div className={ui.row} style={{ alignItems: "flex-start" }}>
              <Controller control={control} name="resources.cpus" render={({ field }) => <TextField label="CPUs" errors={at("resources.cpus")} style={{ width: 80 }} inputMode="decimal" placeholder="auto" {...field} />} />
              <Controller control={control} name="resources.gpus" render={({ field }) => <TextField label="GPUs" errors={at("resources.gpus")} style={{ width: 80 }} inputMode="decimal" placeholder="auto" {...field} />} />
              <Controller control={control} name="priority" render={({ field }) => <TextField label="Priority" help="Higher starts first." errors={at("priority")} style={{ width: 80 }} inputMode="numeric" {...field} />} />
            </div>
          </div>
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Changes as YAML</h2>
            <Field label={`What differs from ${baseName}`} help="Edit here or in the form: they stay in sync." errors={draft.yaml.error ? [draft.yaml.error] : []}>
              {(props) => (
                <textarea
                  {...props}
                  className={`${inputClass} ${styles.code}`}
                  rows={8}
                  value={yamlText}
                  placeholder={"rollout:\n  n: 8"}
                  onFocus={() => dispatch({ type: "yamlFocus" })}
                  onChange={(e) => dispatch({ type: "yamlType", text: e.target.value })}
                  onBlur={() => dispatch({ type: "yamlCommit" })}
                />
              )}
            </Field>
          </div>
          <div className={styles.block}>
            <h2 className={styles.blockTitle}>Overrides</h2>
            <Controller
              control={control}
              name="overrides"
              render={({ field }) => (
                <Field label="key=value, one per line" help="Ours (actor.optim.lr=1e-6) or verl's (actor_rollout_ref.rollout.n=8): applied to the form through the studio's translator." errors={at("overrides")}>
                  {(props) => <textarea {...props} className={`${inputClass} ${styles.code}`} rows={4} name={field.name} value={field.value} onChange={field.onChange} onBlur={field.onBlur} placeholder="actor_rollout_ref.rollout.n=8" />}
                </Field>
              )}
            />
            <Button
              onClick={() => translate.mutate({ config: draft.config, overrides: overrideLines(overrides) }, { onSuccess: onTranslated, onError: (error) => toast.error(error) })}
              disabled={!overrideLines(overrides).length || translate.isPending}
            >
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
