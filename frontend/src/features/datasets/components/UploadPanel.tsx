/**
 * Upload a new version: pick a file, see its detected columns and choose the
 * prompt/answer mapping, then send it with a real progress bar; a large file is
 * imported by a worker, followed here until it is a version or an error.
 */
import { useEffect, useReducer, useRef, useState, type FormEvent } from "react";

import { Button } from "../../../components/Button";
import { Field, SelectField, TextField } from "../../../components/Field";
import { Card, FormRow, layoutClass } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { ProgressBar } from "../../../components/ProgressBar";
import ui from "../../../components/ui.module.css";
import { detectColumns, type DetectedColumns } from "../api";
import { useImportPoll, useRefreshDataset } from "../hooks";
import { columnSample, errorLocation, percentOf, sendUpload, uploadReducer } from "../lib/upload";

const IMPORT_POLL_MS = 1000;

type Format = "auto" | "verl" | "prompt_answer";

export function UploadPanel({ datasetId, onUploaded }: { datasetId: number; onUploaded: (number: number) => void }) {
  const refreshDataset = useRefreshDataset();
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
  const fileInput = useRef<HTMLInputElement>(null);

  // A large file's import: poll the dataset (its `imports`) until this one ends.
  const importId = state.phase === "importing" ? state.job.id : null;
  const polled = useImportPoll(datasetId, importId, IMPORT_POLL_MS);
  useEffect(() => {
    const job = polled.data?.imports.find((i) => i.id === importId);
    if (job) dispatch({ type: "import", job });
  }, [polled.data, importId]);

  useEffect(() => {
    if (state.phase !== "done") return;
    refreshDataset(datasetId);
    onUploaded(state.version);
    // Uploaded: the form is ready for the next version ("Version N is ready" stays).
    setFile(null);
    setDetected(null);
    setMessage("");
    if (fileInput.current) fileInput.current.value = "";
  }, [state, datasetId, refreshDataset, onUploaded]);

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
    <Card label="Upload a new version" title="Upload a new version" onSubmit={submit}>
      <Field label="File (parquet, JSONL or CSV)">
        {(props) => (
          <input
            {...props}
            ref={fileInput}
            type="file"
            accept=".parquet,.pq,.jsonl,.ndjson,.json,.csv"
            onChange={(e) => void choose(e.target.files?.[0] ?? null)}
            disabled={busy}
          />
        )}
      </Field>
      {detectError ? <Notice tone="error">{detectError}</Notice> : null}
      {detected ? (
        <>
          <p className={ui.muted} data-testid="detected-columns">
            Columns found: {columns.join(", ")} ({detected.source_format}
            {detected.data_format === "verl" ? ", verl format" : ""})
          </p>
          <FormRow>
            <SelectField label="Format" value={format} onChange={(value) => setFormat(value as Format)}>
              <option value="auto">detect</option>
              <option value="verl">verl (data_source, prompt, reward_model)</option>
              <option value="prompt_answer">a prompt column and an answer column</option>
            </SelectField>
            {format !== "verl" ? (
              <>
                <ColumnSelect label="Prompt column" columns={columns} value={promptKey} onChange={setPromptKey} />
                <ColumnSelect label="Answer column" columns={columns} value={answerKey} onChange={setAnswerKey} />
                <TextField label="data_source" value={dataSource} onChange={setDataSource} maxLength={100} />
              </>
            ) : null}
          </FormRow>
        </>
      ) : null}
      <FormRow>
        <TextField label="Message" className={layoutClass.grow} value={message} onChange={setMessage} maxLength={300} placeholder="What is in this version?" />
        <Button type="submit" variant="primary" disabled={!file || busy}>
          Upload
        </Button>
        {state.phase === "sending" ? <Button onClick={() => abort.current?.()}>Cancel</Button> : null}
      </FormRow>
      {state.phase !== "idle" && state.phase !== "failed" ? (
        <div aria-live="polite">
          <p className={ui.muted}>
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
        <Notice tone="error" testId="upload-error">
          <strong>
            The file was not accepted
            {where?.row ? ` (row ${where.row}` : ""}
            {where?.row && where.column ? `, column ${where.column})` : where?.row ? ")" : ""}
            {!where?.row && where?.column ? ` (column ${where.column})` : ""}:
          </strong>{" "}
          {state.message}
        </Notice>
      ) : null}
    </Card>
  );
}

function ColumnSelect({ label, columns, value, onChange }: { label: string; columns: string[]; value: string; onChange: (value: string) => void }) {
  return (
    <SelectField label={label} value={value} onChange={onChange}>
      {columns.map((c) => (
        <option key={c} value={c}>
          {c}
        </option>
      ))}
    </SelectField>
  );
}
