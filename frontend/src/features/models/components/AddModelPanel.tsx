/**
 * Add a model to the project, three ways: a folder the server offers, a run's final
 * checkpoint export, or a Hugging Face hub repository (downloaded by a worker: its
 * progress is followed here until it is ready or has failed).
 */
import { useEffect, useState, type FormEvent } from "react";
import { Link } from "react-router";

import { FieldErrors, errorMessage } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { Notice } from "../../../components/Notice";
import { Field, fieldErrorsAt, inputClass, SelectField, TextField } from "../../../components/Field";
import { Tabs } from "../../../components/Tabs";
import ui from "../../../components/ui.module.css";
import { useRuns } from "../../runs/hooks";
import type { Model, ModelCreate } from "../api";
import { useAddModel, useAvailableFolders, useModel } from "../hooks";
import { KIND_LABELS, ROLE_LABELS } from "../lib/format";
import styles from "../pages/Models.module.css";
import { DownloadProgress } from "./ModelStatus";

type Way = "folder" | "checkpoint" | "hub";

const WAYS: { key: Way; label: string }[] = [
  { key: "folder", label: "Server folder" },
  { key: "checkpoint", label: "Run checkpoint" },
  { key: "hub", label: "Hugging Face hub" },
];

export function AddModelPanel({ slug }: { slug: string }) {
  const [way, setWay] = useState<Way>("folder");
  return (
    <section className={ui.card} aria-labelledby="add-model-title">
      <h2 id="add-model-title" className={styles.panelTitle}>
        Add a model
      </h2>
      <Tabs label="How to add a model" tabs={WAYS} current={way} onChange={setWay} />
      <div role="tabpanel" aria-label={WAYS.find((w) => w.key === way)?.label}>
        {way === "folder" ? <FolderForm slug={slug} /> : null}
        {way === "checkpoint" ? <CheckpointForm slug={slug} /> : null}
        {way === "hub" ? <HubForm slug={slug} /> : null}
      </div>
    </section>
  );
}

/** Fields each form shows at a field; any other error is shown under the form. */
function otherError(error: unknown, shown: string[]): string | null {
  if (!error) return null;
  if (error instanceof FieldErrors) {
    const rest = Object.entries(error.fields).filter(([path]) => !shown.includes(path));
    if (!rest.length) return null;
    return rest.map(([path, messages]) => `${path ? `${path}: ` : ""}${messages.join(" ")}`).join("\n");
  }
  return errorMessage(error);
}

function Added({ slug, model }: { slug: string; model: Model }) {
  return (
    <Notice tone="ok">
      Added <Link to={`/p/${slug}/models/${model.id}`}>{model.name}</Link> ({ROLE_LABELS[model.role].toLowerCase()}). Runs
      of this project can now use it.
    </Notice>
  );
}

function NameField({ value, onChange, error, placeholder }: { value: string; onChange: (v: string) => void; error: unknown; placeholder: string }) {
  return (
    <TextField label="Name (optional)" help="How the model is listed in this project." errors={fieldErrorsAt(error, "name")} value={value} maxLength={200} placeholder={placeholder} onChange={(value) => onChange(value)} />
  );
}

function useAdd() {
  const add = useAddModel();
  const [added, setAdded] = useState<Model | null>(null);
  function submit(body: ModelCreate, onDone?: (model: Model) => void) {
    setAdded(null);
    add.mutate(body, {
      onSuccess: (model) => {
        setAdded(model);
        onDone?.(model);
      },
    });
  }
  return { add, added, submit };
}

function FolderForm({ slug }: { slug: string }) {
  const folders = useAvailableFolders(slug);
  const [folder, setFolder] = useState("");
  const [name, setName] = useState("");
  const { add, added, submit } = useAdd();
  const offered = folders.data ?? [];
  const chosen = folder || offered[0]?.folder || "";

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!chosen) return;
    submit({ project: slug, folder: chosen, ...(name.trim() ? { name: name.trim() } : {}) }, () => setName(""));
  }

  const none = folders.isSuccess && offered.length === 0;
  return (
    <form onSubmit={onSubmit} aria-label="Add a server folder">
      <p className={`${ui.muted} ${styles.panelIntro}`}>
        Model folders on the studio&apos;s machine: its demo models and the Hugging Face folders under its model roots.
      </p>
      <div className={styles.formGrid}>
        <SelectField
      label="Folder"
      errors={fieldErrorsAt(add.error, "folder")}
      help={
        folders.isPending
          ? "Loading the folders the server offers…"
          : folders.isError
            ? undefined
            : none
              ? "This server offers no model folders. An administrator can put Hugging Face model folders under a model root (RLSTUDIO_MODEL_ROOTS), or use another way to add a model."
              : `${offered.length} folder${offered.length === 1 ? "" : "s"} on offer.`
      }
          value={chosen}
          onChange={setFolder}
          disabled={!offered.length || add.isPending}>
          {folders.isPending ? <option value="">Loading…</option> : null}
          {none || folders.isError ? <option value="">No folders on offer</option> : null}
          {offered.map((f) => (
            <option key={f.folder} value={f.folder}>
              {f.name} ({KIND_LABELS[f.kind as keyof typeof KIND_LABELS]?.toLowerCase() ?? f.kind})
            </option>
          ))}
        </SelectField>
        <NameField value={name} onChange={setName} error={add.error} placeholder="the folder's name" />
      </div>
      {folders.isError ? (
        <Notice tone="error">The folders the server offers could not be loaded: {errorMessage(folders.error)}</Notice>
      ) : null}
      <div className={styles.actions}>
        <Button type="submit" variant="primary" disabled={!chosen || add.isPending}>
          {add.isPending ? "Adding…" : "Add model"}
        </Button>
      </div>
      {otherError(add.error, ["folder", "name"]) ? <Notice tone="error">{otherError(add.error, ["folder", "name"])}</Notice> : null}
      {added ? <Added slug={slug} model={added} /> : null}
    </form>
  );
}

function CheckpointForm({ slug }: { slug: string }) {
  const runs = useRuns(slug, { ordering: "-created_at", hasCheckpoint: true });
  const [run, setRun] = useState("");
  const [name, setName] = useState("");
  const { add, added, submit } = useAdd();
  const list = runs.data?.results ?? [];
  const chosen = run || (list[0] ? String(list[0].id) : "");

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    const id = Number(chosen);
    if (!Number.isInteger(id) || id < 1) return;
    submit({ project: slug, checkpoint_run: id, ...(name.trim() ? { name: name.trim() } : {}) }, () => setName(""));
  }

  const none = runs.isSuccess && list.length === 0;
  return (
    <form onSubmit={onSubmit} aria-label="Add a run checkpoint">
      <p className={`${ui.muted} ${styles.panelIntro}`}>
        A run&apos;s final Hugging Face export (its latest checkpoint), to train on further or compare against.
      </p>
      <div className={styles.formGrid}>
        <SelectField
      label="Run"
      errors={fieldErrorsAt(add.error, "checkpoint_run")}
      help={
        runs.isPending
          ? "Loading the project's runs…"
          : none
            ? "No run of this project has saved a checkpoint yet: add one once a run has."
            : "Runs that saved a checkpoint (its latest is added)."
      } value={chosen} onChange={setRun} disabled={!list.length || add.isPending}>
          {runs.isPending ? <option value="">Loading…</option> : null}
          {none || runs.isError ? <option value="">No runs with a checkpoint</option> : null}
          {list.map((r) => (
            <option key={r.id} value={r.id}>
              #{r.id} {r.name} ({r.status})
            </option>
          ))}
        </SelectField>
        <NameField value={name} onChange={setName} error={add.error} placeholder="run-<id>-step-<step>" />
      </div>
      {runs.isError ? <Notice tone="error">The project&apos;s runs could not be loaded: {errorMessage(runs.error)}</Notice> : null}
      <div className={styles.actions}>
        <Button type="submit" variant="primary" disabled={!chosen || add.isPending}>
          {add.isPending ? "Adding…" : "Add checkpoint"}
        </Button>
      </div>
      {otherError(add.error, ["checkpoint_run", "name"]) ? (
        <Notice tone="error">{otherError(add.error, ["checkpoint_run", "name"])}</Notice>
      ) : null}
      {added ? <Added slug={slug} model={added} /> : null}
    </form>
  );
}

function HubForm({ slug }: { slug: string }) {
  const [hubId, setHubId] = useState("");
  const [revision, setRevision] = useState("");
  const [name, setName] = useState("");
  const { add, submit } = useAdd();
  const [downloadId, setDownloadId] = useState<number | null>(null);
  const download = useModel(downloadId);
  const model = download.data;

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    if (!hubId.trim()) return;
    setDownloadId(null);
    submit(
      {
        project: slug,
        hub_id: hubId.trim(),
        ...(revision.trim() ? { revision: revision.trim() } : {}),
        ...(name.trim() ? { name: name.trim() } : {}),
      },
      (created) => setDownloadId(created.id),
    );
  }

  // A finished download clears the form for the next one; a failed one keeps it to retry.
  const finished = model?.status === "ready";
  useEffect(() => {
    if (finished) {
      setHubId("");
      setRevision("");
      setName("");
    }
  }, [finished]);

  const busy = add.isPending || model?.status === "queued" || model?.status === "downloading";
  const shown = ["hub_id", "revision", "name"];
  return (
    <form onSubmit={onSubmit} aria-label="Add from the Hugging Face hub">
      <p className={`${ui.muted} ${styles.panelIntro}`}>
        A worker downloads the repository&apos;s safetensors weights into the studio&apos;s model cache. The server needs to
        reach huggingface.co.
      </p>
      <div className={styles.formGrid}>
        <Field label="Repository id" help="owner/name, e.g. Qwen/Qwen2.5-0.5B-Instruct" errors={fieldErrorsAt(add.error, "hub_id")}>
          {(props) => (
            <input
              {...props}
              className={inputClass}
              value={hubId}
              onChange={(e) => setHubId(e.target.value)}
              placeholder="Qwen/Qwen2.5-0.5B-Instruct"
              maxLength={200}
              autoComplete="off"
              spellCheck={false}
              required
            />
          )}
        </Field>
        <TextField label="Revision (optional)" help="A branch, tag or commit; default main." errors={fieldErrorsAt(add.error, "revision")}
              value={revision}
              onChange={setRevision}
              placeholder="main"
              maxLength={100}
              autoComplete="off"
              spellCheck={false} />
        <NameField value={name} onChange={setName} error={add.error} placeholder="the repository id" />
      </div>
      <div className={styles.actions}>
        <Button type="submit" variant="primary" disabled={!hubId.trim() || busy}>
          {add.isPending ? "Adding…" : busy ? "Downloading…" : "Download and add"}
        </Button>
      </div>
      {otherError(add.error, shown) ? <Notice tone="error">{otherError(add.error, shown)}</Notice> : null}
      {downloadId !== null ? <HubDownload slug={slug} model={model} error={download.error} /> : null}
    </form>
  );
}

/** The download started by this form, live. */
function HubDownload({ slug, model, error }: { slug: string; model: Model | undefined; error: unknown }) {
  if (!model) {
    return error ? <Notice tone="error">The download&apos;s progress could not be loaded: {errorMessage(error)}</Notice> : null;
  }
  if (model.status === "ready") return <Added slug={slug} model={model} />;
  if (model.status === "failed") {
    return (
      <Notice tone="error">
        <strong>
          {model.hub_id}
          {model.revision && model.revision !== "main" ? `@${model.revision}` : ""} could not be downloaded.
        </strong>{" "}
        {model.error || "The worker gave no reason."}
      </Notice>
    );
  }
  return (
    <div className={`${ui.notice} ${ui.noticeInfo}`}>
      <div className={`${styles.status} ${styles.statusWide}`}>
        <span>
          {model.status === "queued" ? "Queued" : "Downloading"}:{" "}
          <strong>
            {model.hub_id}
            {model.revision && model.revision !== "main" ? `@${model.revision}` : ""}
          </strong>
        </span>
        <DownloadProgress model={model} />
      </div>
    </div>
  );
}
