import { useMemo, useState } from "react";
import { useNavigate } from "react-router";

import { Button } from "../../../components/Button";
import { Field, fieldErrorsAt, inputClass } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import { errorMessage, FieldErrors } from "../../../api/client";
import type { Schemas } from "../../../api/client";
import { useProjectDatasetVersions } from "../../datasets/hooks";
import { useModels } from "../../models/hooks";
import { RewardVersionPicker } from "../../runs/components/Pickers";
import { useCheckpoints, useRuns } from "../../runs/hooks";
import type { EvaluationCreate } from "../api";
import styles from "../evaluations.module.css";
import { useCreateEvaluation } from "../hooks";

type Builtin = Schemas["BuiltinRewardEnum"];
const BUILTINS: Builtin[] = ["arith", "exact_match", "numeric", "gsm8k", "boxed_math", "countdown", "format_regex", "length_penalty", "verl_default"];

/** The request fields this form shows errors beside. */
const FORM_FIELDS = new Set(["models", "dataset_version", "validation_of_run", "reward_version", "builtin_reward", "k", "temperature", "max_prompts"]);

/** Whether every error of a 400 is shown at its field (else the form says it once below). */
function shownAtFields(error: Error): boolean {
  return error instanceof FieldErrors && Object.keys(error.fields).length > 0 && Object.keys(error.fields).every((f) => FORM_FIELDS.has(f));
}

type Prompts = { kind: "run"; run: number | null } | { kind: "version"; version: number | null };

/** The new-evaluation form: models and checkpoints, prompts, reward, sampling. */
export function NewEvaluationForm({ slug, onDone }: { slug: string; onDone?: () => void }) {
  const models = useModels(slug);
  const runs = useRuns(slug);
  const datasets = useProjectDatasetVersions(slug);
  const create = useCreateEvaluation();
  const navigate = useNavigate();
  const [name, setName] = useState("");
  const [chosenModels, setChosenModels] = useState<number[]>([]);
  const [checkpointRun, setCheckpointRun] = useState<number | null>(null);
  const [chosenSteps, setChosenSteps] = useState<number[]>([]);
  const [prompts, setPrompts] = useState<Prompts>({ kind: "run", run: null });
  const [rewardVersion, setRewardVersion] = useState<number | null>(null);
  const [builtin, setBuiltin] = useState<Builtin | "">("");
  const [greedy, setGreedy] = useState(true);
  const [k, setK] = useState("4");
  const [temperature, setTemperature] = useState("1.0");
  const [maxPrompts, setMaxPrompts] = useState("");
  const checkpoints = useCheckpoints(checkpointRun ?? 0, checkpointRun !== null);
  const policies = useMemo(() => (models.data ?? []).filter((m) => m.role === "policy" && m.status === "ready"), [models.data]);
  const runList = runs.data?.results ?? [];
  const versions = [...datasets.versions.entries()].flatMap(([id, list]) =>
    list.map((v) => ({ id: v.id, label: `${datasets.datasets?.find((d) => d.id === id)?.name ?? id} v${v.number}` })),
  );
  const toggle = (list: number[], value: number) => (list.includes(value) ? list.filter((v) => v !== value) : [...list, value]);
  const error = create.error;
  const canSubmit = chosenModels.length + chosenSteps.length > 0 && (prompts.kind === "run" ? prompts.run !== null : prompts.version !== null);

  const submit = () => {
    const body: EvaluationCreate = {
      project: slug,
      name: name || undefined,
      models: [...chosenModels.map((model) => ({ model })), ...chosenSteps.map((step) => ({ run: checkpointRun as number, step }))],
      ...(prompts.kind === "run" ? { validation_of_run: prompts.run } : { dataset_version: prompts.version }),
      ...(rewardVersion !== null ? { reward_version: rewardVersion } : builtin ? { builtin_reward: builtin } : {}),
      greedy,
      k: greedy ? 1 : Number(k),
      temperature: Number(temperature),
      ...(maxPrompts ? { max_prompts: Number(maxPrompts) } : {}),
      priority: 0,
    };
    create.mutate(body, {
      onSuccess: (created) => {
        onDone?.();
        void navigate(`/p/${slug}/evaluations/${created.id}`);
      },
    });
  };

  return (
    <form
      className={styles.form}
      aria-label="New evaluation"
      onSubmit={(event) => {
        event.preventDefault();
        submit();
      }}
    >
      <Field label="Name" help="Shown in the list (default: Evaluation).">
        {(props) => <input {...props} className={inputClass} value={name} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <fieldset className={styles.choices} aria-label="Models">
        <legend>Models of the project</legend>
        {policies.length === 0 ? <span className={styles.muted}>No ready policy model in this project.</span> : null}
        {policies.map((m) => (
          <label key={m.id}>
            <input type="checkbox" checked={chosenModels.includes(m.id)} onChange={() => setChosenModels(toggle(chosenModels, m.id))} /> {m.name}
          </label>
        ))}
      </fieldset>
      <Field label="Checkpoints of a run" errors={fieldErrorsAt(error, "models")}>
        {(props) => (
          <select
            {...props}
            className={inputClass}
            value={checkpointRun ?? ""}
            onChange={(e) => {
              setCheckpointRun(e.target.value ? Number(e.target.value) : null);
              setChosenSteps([]);
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
      {checkpointRun !== null ? (
        <fieldset className={styles.choices} aria-label="Checkpoints">
          <legend>Checkpoints</legend>
          {(checkpoints.data ?? []).filter((c) => c.reachable).length === 0 ? <span className={styles.muted}>No reachable checkpoint.</span> : null}
          {(checkpoints.data ?? [])
            .filter((c) => c.reachable)
            .map((c) => (
              <label key={c.id}>
                <input type="checkbox" checked={chosenSteps.includes(c.step)} onChange={() => setChosenSteps(toggle(chosenSteps, c.step))} /> step {c.step}
              </label>
            ))}
        </fieldset>
      ) : null}
      <Field label="Prompts" errors={[...fieldErrorsAt(error, "dataset_version"), ...fieldErrorsAt(error, "validation_of_run")]}>
        {(props) => (
          <select
            {...props}
            className={inputClass}
            value={prompts.kind === "run" ? `run:${prompts.run ?? ""}` : `version:${prompts.version ?? ""}`}
            onChange={(e) => {
              const [kind, id] = e.target.value.split(":");
              const value = id ? Number(id) : null;
              setPrompts(kind === "run" ? { kind: "run", run: value } : { kind: "version", version: value });
            }}
          >
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
      <RewardVersionPicker
        slug={slug}
        value={rewardVersion}
        onChange={(id) => {
          setRewardVersion(id);
          create.reset(); // the answer was about the reward that was chosen then
        }}
        errors={fieldErrorsAt(error, "reward_version")}
        emptyLabel="None: a built-in reward or the default"
      />
      {rewardVersion === null ? (
        <Field
          label="Built-in reward"
          help="Default: the run's reward for a run's validation data; otherwise each row's data source picks its scorer (arith, countdown, and verl's GSM8K, MATH, DAPO and Search-R1 sources). Data of any other source needs a reward."
          errors={fieldErrorsAt(error, "builtin_reward")}
        >
          {(props) => (
            <select {...props} className={inputClass} value={builtin} onChange={(e) => setBuiltin(e.target.value as Builtin | "")}>
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
        <input type="checkbox" checked={greedy} onChange={(e) => setGreedy(e.target.checked)} /> Greedy (one response per prompt)
      </label>
      {!greedy ? (
        <div className={ui.row}>
          <Field label="k (responses per prompt)" errors={fieldErrorsAt(error, "k")}>
            {(props) => <input {...props} className={inputClass} type="number" min={1} max={64} value={k} onChange={(e) => setK(e.target.value)} />}
          </Field>
          <Field label="Temperature" errors={fieldErrorsAt(error, "temperature")}>
            {(props) => <input {...props} className={inputClass} type="number" step={0.01} min={0.01} max={2} value={temperature} onChange={(e) => setTemperature(e.target.value)} />}
          </Field>
        </div>
      ) : null}
      <Field label="At most this many prompts" help="Empty: all of them." errors={fieldErrorsAt(error, "max_prompts")}>
        {(props) => <input {...props} className={inputClass} type="number" min={1} value={maxPrompts} onChange={(e) => setMaxPrompts(e.target.value)} />}
      </Field>
      {error && !shownAtFields(error) ? <p role="alert">{errorMessage(error)}</p> : null}
      <div className={ui.row}>
        <Button type="submit" variant="primary" disabled={!canSubmit || create.isPending}>
          {create.isPending ? "Queueing…" : "Start evaluation"}
        </Button>
      </div>
    </form>
  );
}
