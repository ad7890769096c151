/** How a model's fields read on the page: its info (untyped in the schema), sizes, progress. */
import { formatBytes } from "../../../lib/units";
import type { Model, ModelKind, ModelRole, ModelStatus } from "../api";

/** The fields of `info` the page shows, checked (the schema types info as a plain object). */
export type ModelFacts = {
  architecture: string;
  modelType: string;
  parameters: number | null;
  tokenizer: string;
  chatTemplate: string;
};

function text(value: unknown): string {
  return typeof value === "string" ? value : "";
}

export function modelFacts(model: Pick<Model, "info">): ModelFacts {
  const info = model.info ?? {};
  const parameters = info.parameters;
  return {
    architecture: text(info.architecture),
    modelType: text(info.model_type),
    parameters: typeof parameters === "number" && Number.isFinite(parameters) ? parameters : null,
    tokenizer: text(info.tokenizer),
    chatTemplate: text(info.chat_template),
  };
}

export const KIND_LABELS: Record<ModelKind, string> = {
  demo: "Demo model",
  server: "Server folder",
  checkpoint: "Run checkpoint",
  hub: "Hugging Face hub",
};

export const ROLE_LABELS: Record<ModelRole, string> = {
  policy: "Policy",
  reward: "Reward model",
  adapter: "LoRA adapter",
};

export const STATUS_LABELS: Record<ModelStatus, string> = {
  queued: "Queued",
  downloading: "Downloading",
  ready: "Ready",
  failed: "Failed",
};

/** A model a worker is still fetching: poll it. */
export function isPending(status: ModelStatus): boolean {
  return status === "queued" || status === "downloading";
}

export type DownloadProgress = {
  filesDone: number;
  filesTotal: number;
  bytesDone: number;
  bytesTotal: number;
  /** 0–100, or null while the total is not known yet. */
  percent: number | null;
};

export function downloadProgress(model: Pick<Model, "progress">): DownloadProgress {
  const p = model.progress ?? {};
  const num = (key: string) => {
    const value = p[key];
    return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : 0;
  };
  const bytesDone = num("bytes_done");
  const bytesTotal = num("bytes_total");
  const percent = bytesTotal > 0 ? Math.min(100, Math.round((bytesDone / bytesTotal) * 100)) : null;
  return { filesDone: num("files_done"), filesTotal: num("files_total"), bytesDone, bytesTotal, percent };
}

/** "120 MiB of 988 MiB · 1 of 3 files", or what is known so far. */
export function progressLine(progress: DownloadProgress): string {
  const bytes =
    progress.bytesTotal > 0
      ? `${formatBytes(progress.bytesDone)} of ${formatBytes(progress.bytesTotal)}`
      : progress.bytesDone > 0
        ? `${formatBytes(progress.bytesDone)}`
        : "";
  const files = progress.filesTotal > 0 ? `${progress.filesDone} of ${progress.filesTotal} files` : "";
  return [bytes, files].filter(Boolean).join(" · ");
}
