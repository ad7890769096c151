/** A model's status: a pill, a live progress bar while a hub download runs, the error when it failed. */
import { ProgressBar } from "../../../components/ProgressBar";
import ui from "../../../components/ui.module.css";
import type { Model, ModelStatus } from "../api";
import { downloadProgress, progressLine, STATUS_LABELS } from "../lib/format";
import styles from "../pages/Models.module.css";

const PILL_TONE: Record<ModelStatus, string> = {
  queued: ui.live ?? "",
  downloading: ui.live ?? "",
  ready: ui.ok ?? "",
  failed: ui.error ?? "",
};

export function StatusPill({ status }: { status: ModelStatus }) {
  return <span className={`${ui.pill} ${PILL_TONE[status]}`}>{STATUS_LABELS[status]}</span>;
}

/** The download's bar and "x of y · n of m files"; indeterminate until the size is known. */
export function DownloadProgress({ model }: { model: Pick<Model, "name" | "progress" | "status"> }) {
  const progress = downloadProgress(model);
  const line = model.status === "queued" ? "Waiting for a worker…" : progressLine(progress) || "Starting…";
  return (
    <>
      <ProgressBar label={`Download of ${model.name}`} percent={progress.percent} valueText={line} />
      <span className={styles.progressLine}>
        {progress.percent !== null && model.status === "downloading" ? `${progress.percent}% · ` : ""}
        {line}
      </span>
    </>
  );
}

/** The status cell of the models table (`full`: the whole error, for the detail page). */
export function ModelStatusView({ model, full = false }: { model: Model; full?: boolean }) {
  const pending = model.status === "queued" || model.status === "downloading";
  return (
    <div className={`${styles.status} ${full ? styles.statusWide : ""}`}>
      <span>
        <StatusPill status={model.status} />
      </span>
      {pending ? <DownloadProgress model={model} /> : null}
      {model.status === "failed" && model.error ? (
        <span className={full ? styles.statusErrorFull : styles.statusError} title={full ? undefined : model.error}>
          {model.error}
        </span>
      ) : null}
    </div>
  );
}
