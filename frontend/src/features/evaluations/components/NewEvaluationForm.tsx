import { zodResolver } from "@hookform/resolvers/zod";
import { useMemo } from "react";
import { Controller, useForm, useWatch } from "react-hook-form";
import { useNavigate } from "react-router";

import { Button } from "../../../components/Button";
import { Field, inputClass } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import { messagesAt, placeServerErrors } from "../../../lib/serverErrors";
import { useProjectDatasetVersions } from "../../datasets/hooks";
import { useModels } from "../../models/hooks";
import { RewardVersionPicker } from "../../runs/components/Pickers";
import { useCheckpoints, useRuns } from "../../runs/hooks";
import styles from "../evaluations.module.css";
import { useCreateEvaluation } from "../hooks";
import { BUILTINS, emptyEvaluationForm, evaluationFieldOf, evaluationFormSchema, evaluationRequest, type Builtin, type EvaluationFormValues, type Prompts } from "../lib/evaluationForm";

const toggle = (list: number[], value: number) => (list.includes(value) ? list.filter((v) => v !== value) : [...list, value]);

function promptsValue(prompts: Prompts): string {
  return prompts.kind === "run" ? `run:${prompts.run ?? ""}` : `version:${prompts.version ?? ""}`;
}

function parsePrompts(text: string): Prompts {
  const [kind, id] = text.split(":");
  const value = id ? Number(id) : null;
  return kind === "run" ? { kind: "run", run: value } : { kind: "version", version: value };
}

/** The new-evaluation form: models and checkpoints, prompts, reward, sampling. */
export function NewEvaluationForm({ slug, onDone }: { slug: string; onDone?: () => void }) {
  const models = useModels(slug);
  const runs = useRuns(slug);
  const datasets = useProjectDatasetVersions(slug);
  const create = useCreateEvaluation();
  const navigate = useNavigate();
  const { control, register, handleSubmit, setError, setValue, clearErrors, formState } = useForm<EvaluationFormValues>({
    resolver: zodResolver(evaluationFormSchema),
    defaultValues: emptyEvaluationForm,
  });
  const { errors } = formState;
  const at = (path: string) => messagesAt(errors, path);
  const [checkpointRun, rewardVersion, greedy] = useWatch({ control, name: ["checkpointRun", "reward_version", "greedy"] });
  const checkpoints = useCheckpoints(checkpointRun ?? 0, checkpointRun !== null);
  const reachable = (checkpoints.data ?? []).filter((c) => c.reachable);
  const policies = useMemo(() => (models.data ?? []).filter((m) => m.role === "policy" && m.status === "ready"), [models.data]);
  const runList = runs.data?.results ?? [];
  const versions = [...datasets.versions.entries()].flatMap(([id, list]) =>
    list.map((v) => ({ id: v.id, label: `${datasets.datasets?.find((d) => d.id === id)?.name ?? id} v${v.number}` })),
  );

  const onValid = (values: EvaluationFormValues) =>
    create.mutate(evaluationRequest(values, slug), {
      onSuccess: (created) => {
        onDone?.();
        void navigate(`/p/${slug}/evaluations/${created.id}`);
      },
      onError: (error) => {
        // What no field shows is said once, for the whole form.
        const rest = Object.values(placeServerErrors(error, setError, evaluationFieldOf)).flat();
        if (rest.length) setError("root.server", { type: "server", message: rest.join(" ") });
      },
    });

  return (
    <form className={styles.form} aria-label="New evaluation" noValidate onSubmit={(event) => void handleSubmit(onValid)(event)}>
      <Field label="Name" help="Shown in the list (default: Evaluation)." errors={at("name")}>
        {(props) => <input {...props} className={inputClass} {...register("name")} />}
      </Field>
      <Controller
        control={control}
        name="models"
        render={({ field }) => (
          <fieldset className={styles.choices} aria-label="Models" aria-invalid={at("models").length > 0}>
            <legend>Models of the project</legend>
            {policies.length === 0 ? <span className={styles.muted}>No ready policy model in this project.</span> : null}
            {policies.map((m) => (
              <label key={m.id}>
                <input type="checkbox" checked={field.value.includes(m.id)} onChange={() => field.onChange(toggle(field.value, m.id))} /> {m.name}
              </label>
            ))}
            {at("models").length ? (
              <span className={ui.fieldError} role="alert">
                {at("models").join(" ")}
              </span>
            ) : null}
          </fieldset>
        )}
      />
      <Controller
        control={control}
        name="checkpointRun"
        render={({ field }) => (
          <Field label="Checkpoints of a run">
            {(props) => (
              <select
                {...props}
                className={inputClass}
                value={field.value ?? ""}
                onChange={(e) => {
                  field.onChange(e.target.value ? Number(e.target.value) : null);
                  setValue("steps", []);
                }}
              >
                <option value="">None</option>
                {runList.map((r) => (
                  <option key={r.id} value={r.id}>
                    #{r.id} {r.name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
      />
      {checkpointRun !== null ? (
        <Controller
          control={control}
          name="steps"
          render={({ field }) => (
            <fieldset className={styles.choices} aria-label="Checkpoints">
              <legend>Checkpoints</legend>
              {reachable.length === 0 ? <span className={styles.muted}>No reachable checkpoint.</span> : null}
              {reachable.map((c) => (
                <label key={c.id}>
                  <input
                    type="checkbox"
                    checked={field.value.includes(c.step)}
                    onChange={() => {
                      field.onChange(toggle(field.value, c.step));
                      clearErrors("models");
                    }}
                  />{" "}
                  step {c.step}
                </label>
              ))}
            </fieldset>
          )}
        />
      ) : null}
      <Controller
        control={control}
        name="prompts"
        render={({ field }) => (
          <Field label="Prompts" errors={at("prompts")}>
            {(props) => (
              <select {...props} className={inputClass} value={promptsValue(field.value)} onChange={(e) => field.onChange(parsePrompts(e.target.value))}>
                <option value="run:">Choose…</option>
                {runList.map((r) => (
                  <option key={`run-${r.id}`} value={`run:${r.id}`}>
                    Validation data of run #{r.id} {r.name}
                  </option>
                ))}
                {versions.map((v) => (
                  <option key={`version-${v.id}`} value={`version:${v.id}`}>
                    Dataset {v.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
        )}
      />
      <Controller
        control={control}
        name="reward_version"
        render={({ field }) => (
          <RewardVersionPicker
            slug={slug}
            value={field.value}
            onChange={(id) => {
              field.onChange(id);
              // The server's answer was about the reward chosen then.
              clearErrors(["reward_version", "builtin_reward"]);
              clearErrors("root.server");
            }}
            errors={at("reward_version")}
            emptyLabel="None: a built-in reward or the default"
          />
        )}
      />
      {rewardVersion === null ? (
        <Field
          label="Built-in reward"
          help="Default: the run's reward for a run's validation data; otherwise each row's data source picks its scorer (arith, countdown, verl's GSM8K, MATH, DAPO and Search-R1 sources, and its code sources run against their tests). Data of any other source needs a reward."
          errors={at("builtin_reward")}
        >
          {(props) => (
            <select {...props} className={inputClass} {...register("builtin_reward", { setValueAs: (value: string) => value as Builtin | "" })}>
              <option value="">Default</option>
              {BUILTINS.map((b) => (
                <option key={b} value={b}>
                  built-in {b}
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      <label>
        <input type="checkbox" {...register("greedy")} /> Greedy (one response per prompt)
      </label>
      {!greedy ? (
        <div className={ui.row}>
          <Field label="k (responses per prompt)" errors={at("k")}>
            {(props) => <input {...props} className={inputClass} type="number" min={1} max={64} {...register("k")} />}
          </Field>
          <Field label="Temperature" errors={at("temperature")}>
            {(props) => <input {...props} className={inputClass} type="number" step={0.01} min={0.01} max={2} {...register("temperature")} />}
          </Field>
        </div>
      ) : null}
      <Field label="At most this many prompts" help="Empty: all of them." errors={at("max_prompts")}>
        {(props) => <input {...props} className={inputClass} type="number" min={1} {...register("max_prompts")} />}
      </Field>
      {errors.root?.server?.message ? <p role="alert">{errors.root.server.message}</p> : null}
      <div className={ui.row}>
        <Button type="submit" variant="primary" disabled={create.isPending}>
          {create.isPending ? "Queueing…" : "Start evaluation"}
        </Button>
      </div>
    </form>
  );
}
