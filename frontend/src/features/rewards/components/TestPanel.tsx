/**
 * Beside the editor: choose what to score, start a test-run of the saved version,
 * follow its progress live, then read its summary, histogram and rows.
 */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";

import { Button } from "../../../components/Button";
import { datasetKeys, listDatasets, listVersions as listDatasetVersions } from "../../datasets/api";
import { isFinished, rewardKeys, startTestRun, type RewardVersionSummary, type TestRunRequest } from "../api";
import { useTestRun } from "../hooks";
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
  const queryClient = useQueryClient();
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

  const datasets = useQuery({
    queryKey: datasetKeys.list(project),
    queryFn: ({ signal }) => listDatasets(project, signal),
  });
  const chosenDataset = datasetId ?? datasets.data?.find((d) => d.latest_version)?.id ?? null;
  const versions = useQuery({
    queryKey: datasetKeys.versions(chosenDataset ?? 0),
    queryFn: ({ signal }) => listDatasetVersions(chosenDataset as number, signal),
    enabled: chosenDataset !== null,
  });
  const chosenVersion = datasetVersion ?? versions.data?.[0]?.id ?? null;
  const run = useTestRun(testRunId);

  const start = useMutation({
    mutationFn: startTestRun,
    onSuccess: (created) => {
      onTestRun(created.id, created.dataset_version);
      void queryClient.invalidateQueries({ queryKey: rewardKeys.testRuns(functionId) });
    },
    onError: (error: Error) => setFormError(error.message),
  });

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
    start.mutate(body);
  }

  const current = run.data;
  const running = start.isPending || (current !== undefined && !isFinished(current));
  return (
    <section className={styles.panel} aria-label="Test panel">
      <h2 className={styles.heading}>Test {version ? `v${version.number}` : "a saved version"}</h2>
      {!version ? <p className={styles.muted}>Save a version first: test-runs score saved code.</p> : null}
      <form className={styles.form} onSubmit={submit}>
        <label className={styles.field}>
          What to score
          <select aria-label="What to score" value={source} onChange={(e) => setSource(e.target.value as Source)}>
            {SOURCES.map((s) => (
              <option key={s.value} value={s.value}>
                {s.label}
              </option>
            ))}
          </select>
        </label>
        {usesDataset ? (
          <div className={styles.row}>
            <label className={styles.field}>
              Dataset
              <select aria-label="Dataset"
                value={chosenDataset ?? ""}
                onChange={(e) => {
                  setDatasetId(Number(e.target.value));
                  setDatasetVersion(null);
                }}
              >
                {datasets.data?.length ? null : <option value="">No datasets yet</option>}
                {datasets.data?.map((d) => (
                  <option key={d.id} value={d.id}>
                    {d.name}
                  </option>
                ))}
              </select>
            </label>
            <label className={styles.field}>
              Version
              <select aria-label="Version"
                value={chosenVersion ?? ""}
                onChange={(e) => setDatasetVersion(Number(e.target.value))}
              >
                {versions.data?.map((v) => (
                  <option key={v.id} value={v.id}>
                    v{v.number} ({v.row_count} rows)
                  </option>
                ))}
              </select>
            </label>
          </div>
        ) : null}
        {usesDataset ? (
          <div className={styles.row}>
            <label className={styles.field}>
              Rows
              <input
                type="number"
                min={1}
                max={200}
                value={rows}
                onChange={(e) => setRows(Number(e.target.value))}
              />
            </label>
            {sampled ? (
              <label className={styles.field}>
                Samples per prompt
                <input
                  type="number"
                  min={1}
                  max={16}
                  value={samples}
                  onChange={(e) => setSamples(Number(e.target.value))}
                />
              </label>
            ) : (
              <label className={styles.field}>
                Response template
                <input value={template} onChange={(e) => setTemplate(e.target.value)} />
              </label>
            )}
          </div>
        ) : null}
        {source === "checkpoint" ? (
          <label className={styles.field}>
            Checkpoint id (from the run's page)
            <input
              inputMode="numeric"
              value={checkpoint}
              onChange={(e) => setCheckpoint(e.target.value)}
            />
          </label>
        ) : null}
        {source === "completions" ? (
          <label className={styles.field}>
            Completions (JSON list of solution_str / ground_truth)
            <textarea rows={5} value={pasted} onChange={(e) => setPasted(e.target.value)} />
          </label>
        ) : null}
        <label className={styles.field}>
          Keyword arguments (JSON object, as a run's reward.kwargs)
          <input
            value={kwargsText}
            placeholder="{}"
            onChange={(e) => setKwargsText(e.target.value)}
          />
        </label>
        <Button type="submit" variant="primary" disabled={!version || running}>
          {running ? "Test-run in progress…" : "Run test"}
        </Button>
        {formError ? (
          <p className={styles.errorBox} role="alert">
            {formError}
          </p>
        ) : null}
      </form>
      {run.isError ? (
        <p className={styles.errorBox} role="alert">
          {run.error.message}
        </p>
      ) : null}
      {current && !isFinished(current) ? <TestRunProgress run={current} /> : null}
      {current && isFinished(current) ? <TestRunResult run={current} /> : null}
    </section>
  );
}
