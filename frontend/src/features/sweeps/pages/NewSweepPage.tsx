import { zodResolver } from "@hookform/resolvers/zod";
import { useEffect, useMemo, useState } from "react";
import { Controller, useForm, useWatch, type Control } from "react-hook-form";
import { Link, useNavigate, useSearchParams } from "react-router";

import { Button } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { Field, inputClass, SelectField, TextField } from "../../../components/Field";
import { Notice } from "../../../components/Notice";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { useToast } from "../../../components/Toast";
import ui from "../../../components/ui.module.css";
import { messagesAt, placeServerErrors } from "../../../lib/serverErrors";
import { useMetricKeysOf } from "../../metrics/hooks";
import { useProjectSlug } from "../../projects/hooks";
import type { Preset, RunDetail } from "../../runs/api";
import { DatasetPicker, RewardVersionPicker } from "../../runs/components/Pickers";
import { useConfigSchema, usePresets, useRun } from "../../runs/hooks";
import type { ConfigTree } from "../../runs/lib/configDiff";
import { sectionsOf, type FieldSpec } from "../../runs/lib/configSchema";
import runStyles from "../../runs/pages/NewRunPage.module.css";
import { SpaceEditor } from "../components/SpaceEditor";
import { useCreateSweep } from "../hooks";
import { floatGridMessage, gridPoints, gridSize } from "../lib/space";
import { BUILTIN_REWARDS, initialSweepForm, METHODS, PRUNERS, sweepFieldOf, sweepFormSchema, sweepRequest, toParam, type SweepFormValues, type ValidSweepForm } from "../lib/sweepForm";
import type { SweepDetail } from "../lib/types";

const DEFAULT_PRESET = "grpo-tiny-arith";

/** `/p/:slug/sweeps/new`, and `?from_run=ID` ("Sweep from this run": each trial clones that run). */
export function NewSweepPage() {
  const [params] = useSearchParams();
  const asked = Number(params.get("from_run"));
  const fromRun = Number.isInteger(asked) && asked > 0 ? asked : null;
  const schema = useConfigSchema();
  const presets = usePresets();
  const run = useRun(fromRun ?? 0, fromRun !== null);
  const failed = schema.error ?? presets.error ?? (fromRun !== null ? run.error : null);
  if (failed) return <ErrorState title="Could not load the sweep form" error={failed} onRetry={() => void Promise.all([schema.refetch(), presets.refetch(), fromRun !== null ? run.refetch() : null])} />;
  if (!schema.data || !presets.data || (fromRun !== null && !run.data)) return <Loading what="the sweep form" />;
  return <SweepForm schema={schema.data} presets={presets.data} base={run.data ?? null} />;
}

function firstPreset(presets: Preset[]): string {
  return presets.some((p) => p.name === DEFAULT_PRESET) ? DEFAULT_PRESET : (presets[0]?.name ?? "");
}

type SweepFormProps = { schema: Record<string, unknown>; presets: Preset[]; base: RunDetail | null };

function SweepForm({ schema, presets, base }: SweepFormProps) {
  const slug = useProjectSlug();
  const navigate = useNavigate();
  const toast = useToast();
  const sections = useMemo(() => sectionsOf(schema), [schema]);
  const fields = useMemo(() => new Map<string, FieldSpec>(sections.flatMap((s) => s.fields.map((f) => [f.path, f] as const))), [sections]);
  const form = useForm<SweepFormValues, unknown, ValidSweepForm>({
    resolver: zodResolver(sweepFormSchema),
    defaultValues: initialSweepForm({ run: base ? { id: base.id, name: base.name } : null, preset: base?.preset || firstPreset(presets) }),
    shouldFocusError: false,
  });
  const { control, handleSubmit, setError, getValues, formState } = form;
  const at = (path: string) => messagesAt(formState.errors, path);
  const preset = useWatch({ control, name: "preset" });
  const baseConfig = (base ? base.config : (presets.find((p) => p.name === preset)?.config ?? {})) as ConfigTree;
  const metricKeys = useMetricKeysOf(base ? [base.id] : [], base !== null);

  // Focus goes to the first field in error once the errors are on screen (pickers hold no ref).
  const [focusRequest, setFocusRequest] = useState(0);
  useEffect(() => {
    if (focusRequest === 0) return;
    const field = document.querySelector<HTMLElement>('form [aria-invalid="true"]');
    if (field) field.focus();
    else document.querySelector<HTMLElement>('form [role="alert"]')?.scrollIntoView({ block: "center" });
  }, [focusRequest]);

  // Server messages no field shows (the base's config refused, say): above the form, beside a toast.
  const [general, setGeneral] = useState<string[]>([]);
  const create = useCreateSweep();
  const onValid = (values: ValidSweepForm) => {
    setGeneral([]);
    create.mutate(sweepRequest(values, slug), {
      onSuccess: (sweep: SweepDetail) => {
        toast.show(`Sweep “${sweep.name}” started.`, "success");
        void navigate(`/p/${slug}/sweeps/${sweep.id}`);
      },
      onError: (error) => {
        const rest = placeServerErrors(error, setError, (path) => sweepFieldOf(path, getValues("space")));
        setGeneral(Object.entries(rest).flatMap(([path, messages]) => messages.map((m) => (path ? `${path}: ${m}` : m))));
        if (Object.keys(rest).length) toast.error(error);
        setFocusRequest((n) => n + 1);
      },
    });
  };

  return (
    <form onSubmit={(event) => void handleSubmit(onValid, () => setFocusRequest((n) => n + 1))(event)} noValidate aria-label="New sweep">
      <PageHeader
        title={base ? `Sweep from ${base.name}` : "New sweep"}
        description={base ? `Each trial clones run #${base.id} with its own values of the parameters below.` : "Each trial is a run of the preset with its own values of the parameters below."}
        actions={
          <Button type="submit" variant="primary" disabled={create.isPending}>
            {create.isPending ? "Starting…" : "Start sweep"}
          </Button>
        }
      />
      {general.length ? (
        <Notice tone="error" className={runStyles.block}>
          {general.join("\n")}
        </Notice>
      ) : null}
      <div className={runStyles.layout}>
        <div>
          <div className={runStyles.block}>
            <h2 className={runStyles.blockTitle}>Base</h2>
            <div className={ui.row} style={{ alignItems: "flex-start" }}>
              <Controller control={control} name="name" render={({ field }) => <TextField label="Sweep name" errors={at("name")} maxLength={200} style={{ minWidth: 260 }} {...field} />} />
              {base ? null : (
                <Controller
                  control={control}
                  name="preset"
                  render={({ field }) => (
                    <SelectField label="Preset" help="The config every trial starts from." errors={at("preset")} value={field.value} onChange={field.onChange}>
                      {presets.map((p) => (
                        <option key={p.name}>{p.name}</option>
                      ))}
                    </SelectField>
                  )}
                />
              )}
            </div>
            {base ? (
              <p className={ui.muted}>
                Base: <Link to={`/p/${slug}/runs/${base.id}`}>{base.name}</Link> (#{base.id}): its config and inputs, except what the sweep searches.
              </p>
            ) : (
              <>
                <Controller control={control} name="dataset" render={({ field }) => <DatasetPicker slug={slug} value={field.value} onChange={field.onChange} errors={at("dataset")} />} />
                <Controller control={control} name="reward_version" render={({ field }) => <RewardVersionPicker slug={slug} value={field.value} onChange={field.onChange} errors={at("reward_version")} />} />
              </>
            )}
            <Controller
              control={control}
              name="overrides"
              render={({ field }) => (
                <Field label="Overrides for every trial" help="key=value, one per line (e.g. trainer.total_steps=20): applied to the base before each trial's parameters." errors={at("overrides")}>
                  {(props) => <textarea {...props} className={`${inputClass} ${runStyles.code}`} rows={3} name={field.name} value={field.value} onChange={field.onChange} onBlur={field.onBlur} placeholder="trainer.total_steps=20" />}
                </Field>
              )}
            />
          </div>
          <div className={runStyles.block}>
            <h2 className={runStyles.blockTitle}>Search space</h2>
            <SpaceEditor form={form} sections={sections} fields={fields} baseConfig={baseConfig} slug={slug} />
          </div>
        </div>
        <aside className={runStyles.side} aria-label="Method, metric and budget">
          <div className={runStyles.block}>
            <h2 className={runStyles.blockTitle}>Method</h2>
            <Controller
              control={control}
              name="method"
              render={({ field }) => (
                <SelectField label="Search method" errors={at("method")} value={field.value} onChange={field.onChange}>
                  {METHODS.map((m) => (
                    <option key={m.value} value={m.value}>
                      {m.label}
                    </option>
                  ))}
                </SelectField>
              )}
            />
            <GridSummary control={control} />
            <Controller control={control} name="seed" render={({ field }) => <TextField label="Seed" help="The same seed draws the same trials." errors={at("seed")} inputMode="numeric" style={{ width: 100 }} {...field} />} />
          </div>
          <div className={runStyles.block}>
            <h2 className={runStyles.blockTitle}>Metric</h2>
            <Controller
              control={control}
              name="metric"
              render={({ field }) => (
                <Field label="Metric" help="Empty: the validation score (the mean of the val-core reward keys). Or a metric key." errors={at("metric")}>
                  {(props) => (
                    <>
                      <input {...props} className={inputClass} list="sweep-metric-keys" placeholder="validation score" name={field.name} value={field.value} onChange={field.onChange} onBlur={field.onBlur} />
                      <datalist id="sweep-metric-keys">
                        {metricKeys.data?.map((key) => (
                          <option key={key} value={key} />
                        ))}
                      </datalist>
                    </>
                  )}
                </Field>
              )}
            />
            <Controller
              control={control}
              name="direction"
              render={({ field }) => (
                <SelectField label="Direction" errors={at("direction")} value={field.value} onChange={field.onChange}>
                  <option value="maximize">maximize</option>
                  <option value="minimize">minimize</option>
                </SelectField>
              )}
            />
            <Controller
              control={control}
              name="metric_reward"
              render={({ field }) => (
                <SelectField label="Reward that scores validation" help="A built-in reward that scores every trial's validation alike: needed when the reward version is searched." errors={at("metric_reward")} value={field.value} onChange={field.onChange}>
                  <option value="">(each trial&apos;s own reward)</option>
                  {BUILTIN_REWARDS.map((name) => (
                    <option key={name} value={name}>
                      {name}
                    </option>
                  ))}
                </SelectField>
              )}
            />
          </div>
          <div className={runStyles.block}>
            <h2 className={runStyles.blockTitle}>Budget</h2>
            <div className={ui.row} style={{ alignItems: "flex-start" }}>
              <Controller control={control} name="max_trials" render={({ field }) => <TextField label="Max trials" errors={at("max_trials")} inputMode="numeric" style={{ width: 90 }} {...field} />} />
              <Controller control={control} name="parallelism" render={({ field }) => <TextField label="At a time" help="Within the project's queue cap." errors={at("parallelism")} inputMode="numeric" style={{ width: 90 }} {...field} />} />
            </div>
            <Pruner control={control} at={at} />
            <Controller
              control={control}
              name="stop_on_critical_alert"
              render={({ field }) => (
                <label style={{ display: "flex", gap: 8, alignItems: "baseline", fontSize: "0.875rem" }}>
                  <input type="checkbox" checked={field.value} onChange={(e) => field.onChange(e.target.checked)} />
                  Stop a trial on a critical reward-hacking alert (length drift, one component dominating, a KL or entropy spike); it is marked stopped and the sweep goes on
                </label>
              )}
            />
          </div>
        </aside>
      </div>
    </form>
  );
}

type SweepControl = Control<SweepFormValues, unknown, ValidSweepForm>;

/** The number of trials a grid makes, before it starts; a float range is an error here (the form's too). */
function GridSummary({ control }: { control: SweepControl }) {
  const [method, space, maxTrials] = useWatch({ control, name: ["method", "space", "max_trials"] });
  if (method !== "grid") return null;
  const params = space.map(toParam);
  const size = gridSize(params);
  if ("floats" in size) return <Notice tone="error">{floatGridMessage(size.floats)}</Notice>;
  if (!params.length) return <p className={ui.muted}>Add parameters to see the grid&apos;s size.</p>;
  const factors = params.map((p) => gridPoints(p) ?? 0).join(" × ");
  const capped = Number(maxTrials) < size.trials;
  return (
    <Notice tone="info" testId="grid-size">
      The grid makes {params.length > 1 ? `${factors} = ` : ""}
      <strong>{size.trials}</strong> trial{size.trials === 1 ? "" : "s"}.{capped ? ` Max trials (${maxTrials}) runs only the first ${maxTrials}.` : ""}
    </Notice>
  );
}

function Pruner({ control, at }: { control: SweepControl; at: (path: string) => string[] }) {
  const kind = useWatch({ control, name: "pruner.kind" });
  return (
    <div>
      <Controller
        control={control}
        name="pruner.kind"
        render={({ field }) => (
          <SelectField label="Pruner" help="Stops trials that fall behind, to spend steps on better ones." errors={at("pruner.kind")} value={field.value} onChange={field.onChange}>
            {PRUNERS.map((p) => (
              <option key={p.value} value={p.value}>
                {p.label}
              </option>
            ))}
          </SelectField>
        )}
      />
      {kind !== "none" ? (
        <div className={ui.row} style={{ alignItems: "flex-start" }}>
          <Controller control={control} name="pruner.min_steps" render={({ field }) => <TextField label="Min steps" help="Never pruned before." errors={at("pruner.min_steps")} inputMode="numeric" style={{ width: 90 }} {...field} />} />
          {kind === "asha" ? (
            <Controller control={control} name="pruner.reduction_factor" render={({ field }) => <TextField label="Reduction factor" errors={at("pruner.reduction_factor")} inputMode="numeric" style={{ width: 90 }} {...field} />} />
          ) : null}
        </div>
      ) : null}
    </div>
  );
}
