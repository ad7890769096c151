/**
 * Beside the editor: choose what to score, start a test-run of the saved version,
 * follow its progress live, then read its summary, histogram and rows.
 */
import { useState, type FormEvent } from "react";

import { Button } from "../../../components/Button";
import { Field, inputClass, SelectField, TextField } from "../../../components/Field";
import { Notice } from "../../../components/Notice";
import { Card, FormRow } from "../../../components/Layout";
import ui from "../../../components/ui.module.css";
import { useDatasets, useDatasetVersions } from "../../datasets/hooks";
import { isFinished, type RewardVersionSummary, type TestRunRequest } from "../api";
import { useStartTestRun, useTestRun } from "../hooks";
import styles from "./TestPanel.module.css";
import { TestRunProgress } from "./TestRunProgress";
import { TestRunResult } from "./TestRunResult";

type Source = TestRunRequest["source"];

const SOURCES: { value: Source; label: string }[] = [
  { value: "references", label: "Reference answers of dataset rows" },
  { value: "demo_model", label: "Completions sampled from the demo model" },
  { value: "checkpoint", label: "Completions sampled from a run's checkpoint" },
  { value: "completions", label: "Pasted completions (JSON)" },
];

const PASTE_EXAMPLE = '[{"solution_str": "#### 42", "ground_truth": "42"}]';

type TestPanelProps = {
  project: string;
  functionId: number;
  version: RewardVersionSummary | null;
  /** Tells the page which test-run (and dataset version) is shown, for A/B and training. */
  onTestRun: (id: number, datasetVersion: number | null) => void;
  testRunId: number | null;
};

export function TestPanel({ project, functionId, version, onTestRun, testRunId }: TestPanelProps) {
  const [source, setSource] = useState<Source>("references");
  const [datasetId, setDatasetId] = useState<number | null>(null);
  const [datasetVersion, setDatasetVersion] = useState<number | null>(null);
  const [rows, setRows] = useState(8);
  const [samples, setSamples] = useState(2);
  const [template, setTemplate] = useState("{ground_truth}");
  const [checkpoint, setCheckpoint] = useState("");
  const [pasted, setPasted] = useState(PASTE_EXAMPLE);
  const [kwargsText, setKwargsText] = useState("");
  const [formError, setFormError] = useState<string | null>(null);

  const datasets = useDatasets(project);
  const chosenDataset = datasetId ?? datasets.data?.find((d) => d.latest_version)?.id ?? null;
  const versions = useDatasetVersions(chosenDataset);
  const chosenVersion = datasetVersion ?? versions.data?.[0]?.id ?? null;
  const run = useTestRun(testRunId);

  const start = useStartTestRun(functionId);

  const usesDataset = source !== "completions";
  const sampled = source === "demo_model" || source === "checkpoint";

  function submit(event: FormEvent) {
    event.preventDefault();
    setFormError(null);
    if (!version) return;
    const body: TestRunRequest = {
      reward_version: version.id,
      source,
      rows,
      offset: 0,
      solution_template: template,
      timeout_s: 2,
      samples_per_prompt: sampled ? samples : 1,
      temperature: 1,
      top_p: 1,
      top_k: 0,
      max_new_tokens: 32,
      seed: 0,
    };
    if (usesDataset) {
      if (chosenVersion === null) {
        setFormError("Choose a dataset version (upload one on the Datasets page first).");
        return;
      }
      body.dataset_version = chosenVersion;
    }
    if (source === "checkpoint") body.checkpoint = Number(checkpoint);
    if (kwargsText.trim() !== "") {
      try {
        body.kwargs = JSON.parse(kwargsText) as TestRunRequest["kwargs"];
      } catch (error) {
        setFormError(`The keyword arguments are not JSON: ${(error as Error).message}`);
        return;
      }
    }
    if (source === "completions") {
      try {
        body.completions = JSON.parse(pasted) as TestRunRequest["completions"];
      } catch (error) {
        setFormError(`The pasted completions are not JSON: ${(error as Error).message}`);
        return;
      }
    }
    start.mutate(body, {
      onSuccess: (created) => onTestRun(created.id, created.dataset_version),
      onError: (error) => setFormError(error.message),
    });
  }

  const current = run.data;
  const running = start.isPending || (current !== undefined && !isFinished(current));
  return (
    <Card label="Test panel" title={<>Test {version ? `v${version.number}` : "a saved version"}</>}>
      {!version ? <p className={ui.muted}>Save a version first: test-runs score saved code.</p> : null}
      <form className={styles.form} onSubmit={submit}>
        <SelectField label="What to score" value={source} onChange={(value) => setSource(value as Source)}>
          {SOURCES.map((s) => (
            <option key={s.value} value={s.value}>
              {s.label}
            </option>
          ))}
        </SelectField>
        {usesDataset ? (
          <FormRow>
            <SelectField
              label="Dataset"
              value={chosenDataset ?? ""}
              onChange={(value) => {
                setDatasetId(Number(value));
                setDatasetVersion(null);
              }}
            >
              {datasets.data?.length ? null : <option value="">No datasets yet</option>}
              {datasets.data?.map((d) => (
                <option key={d.id} value={d.id}>
                  {d.name}
                </option>
              ))}
            </SelectField>
            <SelectField label="Version" value={chosenVersion ?? ""} onChange={(value) => setDatasetVersion(Number(value))}>
              {versions.data?.map((v) => (
                <option key={v.id} value={v.id}>
                  v{v.number} ({v.row_count} rows)
                </option>
              ))}
            </SelectField>
          </FormRow>
        ) : null}
        {usesDataset ? (
          <FormRow>
            <TextField label="Rows" type="number" min={1} max={200} value={rows} onChange={(value) => setRows(Number(value))} />
            {sampled ? (
              <TextField label="Samples per prompt" type="number" min={1} max={16} value={samples} onChange={(value) => setSamples(Number(value))} />
            ) : (
              <TextField label="Response template" value={template} onChange={setTemplate} />
            )}
          </FormRow>
        ) : null}
        {source === "checkpoint" ? <TextField label="Checkpoint id (from the run's page)" inputMode="numeric" value={checkpoint} onChange={setCheckpoint} /> : null}
        {source === "completions" ? (
          <Field label="Completions (JSON list of solution_str / ground_truth)">
            {(props) => <textarea {...props} className={`${inputClass} ${styles.code}`} rows={5} value={pasted} onChange={(e) => setPasted(e.target.value)} />}
          </Field>
        ) : null}
        <TextField label="Keyword arguments (JSON object, as a run's reward.kwargs)" value={kwargsText} placeholder="{}" onChange={setKwargsText} />
        <Button type="submit" variant="primary" disabled={!version || running}>
          {running ? "Test-run in progress…" : "Run test"}
        </Button>
        {formError ? (
          <Notice tone="error">{formError}</Notice>
        ) : null}
      </form>
      {run.isError ? (
        <Notice tone="error">{run.error.message}</Notice>
      ) : null}
      {current && !isFinished(current) ? <TestRunProgress run={current} /> : null}
      {current && isFinished(current) ? <TestRunResult run={current} /> : null}
    </Card>
  );
}
