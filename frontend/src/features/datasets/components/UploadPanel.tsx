/**
 * Upload a new version: pick a file, see its detected columns and choose the
 * prompt/answer mapping, then send it with a real progress bar; a large file is
 * imported by a worker, followed here until it is a version or an error.
 */
import { useQuery, useQueryClient } from "@tanstack/react-query";
import { useEffect, useReducer, useRef, useState, type FormEvent } from "react";

import { Button } from "../../../components/Button";
import { datasetKeys, detectColumns, getDataset, type DetectedColumns } from "../api";
import styles from "../pages/Datasets.module.css";
import { columnSample, errorLocation, percentOf, sendUpload, uploadReducer } from "../upload";
import { ProgressBar } from "../../../components/ProgressBar";

const IMPORT_POLL_MS = 1000;

type Format = "auto" | "verl" | "prompt_answer";

export function UploadPanel({ datasetId, onUploaded }: { datasetId: number; onUploaded: (number: number) => void }) {
  const queryClient = useQueryClient();
  const [file, setFile] = useState<File | null>(null);
  const [detected, setDetected] = useState<DetectedColumns | null>(null);
  const [detectError, setDetectError] = useState<string | null>(null);
  const [format, setFormat] = useState<Format>("auto");
  const [promptKey, setPromptKey] = useState("prompt");
  const [answerKey, setAnswerKey] = useState("answer");
  const [dataSource, setDataSource] = useState("default");
  const [message, setMessage] = useState("");
  const [state, dispatch] = useReducer(uploadReducer, { phase: "idle" });
  const abort = useRef<(() => void) | null>(null);

  // A large file's import: poll the dataset (its `imports`) until this one ends.
  const importId = state.phase === "importing" ? state.job.id : null;
  const polled = useQuery({
    queryKey: [...datasetKeys.detail(datasetId), "import", importId],
    queryFn: ({ signal }) => getDataset(datasetId, signal),
    enabled: importId !== null,
    refetchInterval: IMPORT_POLL_MS,
  });
  useEffect(() => {
    const job = polled.data?.imports.find((i) => i.id === importId);
    if (job) dispatch({ type: "import", job });
  }, [polled.data, importId]);

  useEffect(() => {
    if (state.phase !== "done") return;
    void queryClient.invalidateQueries({ queryKey: datasetKeys.versions(datasetId) });
    void queryClient.invalidateQueries({ queryKey: datasetKeys.detail(datasetId) });
    onUploaded(state.version);
  }, [state, datasetId, queryClient, onUploaded]);

  async function choose(chosen: File | null) {
    setFile(chosen);
    setDetected(null);
    setDetectError(null);
    dispatch({ type: "reset" });
    if (!chosen) return;
    const { sample, truncated } = columnSample(chosen);
    try {
      const columns = await detectColumns(sample, truncated);
      setDetected(columns);
      setFormat(columns.data_format);
      setPromptKey(columns.prompt_key || "prompt");
      setAnswerKey(columns.answer_key || "answer");
    } catch (error) {
      setDetectError((error as Error).message);
    }
  }

  function submit(event: FormEvent) {
    event.preventDefault();
    if (!file) return;
    const form = new FormData();
    form.set("file", file);
    form.set("message", message);
    form.set("format", format);
    form.set("prompt_key", promptKey);
    form.set("answer_key", answerKey);
    form.set("data_source", dataSource || "default");
    const upload = sendUpload({ datasetId, form, onEvent: dispatch });
    abort.current = upload.abort;
    upload.done.catch(() => undefined).finally(() => (abort.current = null));
  }

  const percent = percentOf(state);
  const busy = state.phase === "sending" || state.phase === "validating" || state.phase === "importing";
  const columns = detected?.columns ?? [];
  const where = state.phase === "failed" ? errorLocation(state.message) : null;
  return (
    <form className={styles.card} onSubmit={submit} aria-label="Upload a new version">
      <h2 className={styles.heading}>Upload a new version</h2>
      <label className={styles.field}>
        File (parquet, JSONL or CSV)
        <input
          type="file"
          accept=".parquet,.pq,.jsonl,.ndjson,.json,.csv"
          onChange={(e) => void choose(e.target.files?.[0] ?? null)}
          disabled={busy}
        />
      </label>
      {detectError ? (
        <p className={styles.error} role="alert">
          {detectError}
        </p>
      ) : null}
      {detected ? (
        <>
          <p className={styles.muted} data-testid="detected-columns">
            Columns found: {columns.join(", ")} ({detected.source_format}
            {detected.data_format === "verl" ? ", verl format" : ""})
          </p>
          <div className={styles.formRow}>
            <label className={styles.field}>
              Format
              <select aria-label="Format" value={format} onChange={(e) => setFormat(e.target.value as Format)}>
                <option value="auto">detect</option>
                <option value="verl">verl (data_source, prompt, reward_model)</option>
                <option value="prompt_answer">a prompt column and an answer column</option>
              </select>
            </label>
            {format !== "verl" ? (
              <>
                <label className={styles.field}>
                  Prompt column
                  <select aria-label="Prompt column" value={promptKey} onChange={(e) => setPromptKey(e.target.value)}>
                    {columns.map((c) => (
                      <option key={c} value={c}>
                        {c}
                      </option>
                    ))}
                  </select>
                </label>
                <label className={styles.field}>
                  Answer column
                  <select aria-label="Answer column" value={answerKey} onChange={(e) => setAnswerKey(e.target.value)}>
                    {columns.map((c) => (
                      <option key={c} value={c}>
                        {c}
                      </option>
                    ))}
                  </select>
                </label>
                <label className={styles.field}>
                  data_source
                  <input value={dataSource} onChange={(e) => setDataSource(e.target.value)} maxLength={100} />
                </label>
              </>
            ) : null}
          </div>
        </>
      ) : null}
      <div className={styles.formRow}>
        <label className={`${styles.field} ${styles.grow}`}>
          Message
          <input value={message} onChange={(e) => setMessage(e.target.value)} maxLength={300} placeholder="What is in this version?" />
        </label>
        <Button type="submit" variant="primary" disabled={!file || busy}>
          Upload
        </Button>
        {state.phase === "sending" ? (
          <Button onClick={() => abort.current?.()}>Cancel</Button>
        ) : null}
      </div>
      {state.phase !== "idle" && state.phase !== "failed" ? (
        <div aria-live="polite">
          <p className={styles.muted}>
            {state.phase === "sending"
              ? `Uploading… ${percent ?? 0}% (${Math.round(state.loaded / 1024)} of ${Math.round(state.total / 1024)} KiB)`
              : state.phase === "validating"
                ? "Uploaded; checking every row…"
                : state.phase === "importing"
                  ? `Large file: a worker is importing it (${state.job.status})…`
                  : `Version ${state.version} is ready.`}
          </p>
          <ProgressBar label="Upload progress" percent={percent} />
        </div>
      ) : null}
      {state.phase === "failed" ? (
        <div className={styles.error} role="alert" data-testid="upload-error">
          <strong>
            The file was not accepted
            {where?.row ? ` (row ${where.row}` : ""}
            {where?.row && where.column ? `, column ${where.column})` : where?.row ? ")" : ""}
            {!where?.row && where?.column ? ` (column ${where.column})` : ""}:
          </strong>{" "}
          {state.message}
        </div>
      ) : null}
    </form>
  );
}
