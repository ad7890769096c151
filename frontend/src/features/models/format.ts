/** How a model's fields read on the page: its info (untyped in the schema), sizes, progress. */
import type { Model, ModelKind, ModelRole, ModelStatus } from "./api";

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

/** A parameter count as people say it: 3_300_000 -> "3.3M", 494_032_768 -> "494M", 1.5e9 -> "1.5B". */
export function formatParameters(count: number | null): string {
  if (count === null || count < 0) return "–";
  const units: [number, string][] = [
    [1e12, "T"],
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "K"],
  ];
  for (const [size, suffix] of units) {
    if (count >= size) return `${compact(count / size)}${suffix}`;
  }
  return String(count);
}

/** Three significant digits at most, no trailing ".0": 3.34 -> "3.3", 494.03 -> "494", 12.46 -> "12.5". */
function compact(value: number): string {
  const digits = value >= 100 ? 0 : 1;
  const rounded = Number(value.toFixed(digits));
  // 999.6K rounds to "1000K": say "1000" rather than bumping units; rare and still true.
  return String(rounded);
}

/** Bytes in binary units: 1536 -> "1.5 KiB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 0) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
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
