/**
 * Uploading a dataset version with a real progress bar. fetch() can't report upload
 * progress, so this uses XMLHttpRequest's `upload.onprogress`. The studio answers 201
 * with the version (validated in the request) or, for a large file, 202 with an import
 * a worker runs; `uploadReducer` turns those events into what the form shows.
 */
import { readCsrfToken, type Schemas } from "../../../api/client";
import { toApiError } from "../../../api/errors";

export type DatasetVersion = Schemas["DatasetVersion"];
export type DatasetImport = Schemas["DatasetImport"];

export type UploadOutcome =
  | { kind: "version"; version: DatasetVersion }
  | { kind: "import"; job: DatasetImport };

export class UploadFailed extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = "UploadFailed";
  }
}

export type UploadState =
  | { phase: "idle" }
  | { phase: "sending"; loaded: number; total: number }
  /** Every byte sent; the studio validates and stores the file. */
  | { phase: "validating"; total: number }
  /** A large file: a worker imports it; `job` is its latest state. */
  | { phase: "importing"; job: DatasetImport }
  | { phase: "done"; version: number }
  | { phase: "failed"; message: string };

export type UploadEvent =
  | { type: "start"; total: number }
  | { type: "progress"; loaded: number; total: number }
  | { type: "sent" }
  | { type: "answered"; outcome: UploadOutcome }
  | { type: "import"; job: DatasetImport }
  | { type: "failed"; message: string }
  | { type: "reset" };

export function uploadReducer(state: UploadState, event: UploadEvent): UploadState {
  switch (event.type) {
    case "reset":
      return { phase: "idle" };
    case "start":
      return { phase: "sending", loaded: 0, total: event.total };
    case "progress":
      if (state.phase !== "sending") return state; // late events after the answer
      return {
        phase: "sending",
        loaded: Math.min(event.loaded, event.total),
        total: event.total || state.total,
      };
    case "sent":
      if (state.phase !== "sending") return state;
      return { phase: "validating", total: state.total };
    case "answered":
      if (event.outcome.kind === "version") {
        return { phase: "done", version: event.outcome.version.number };
      }
      return importState(event.outcome.job);
    case "import":
      return state.phase === "importing" ? importState(event.job) : state;
    case "failed":
      return { phase: "failed", message: event.message };
  }
}

function importState(job: DatasetImport): UploadState {
  if (job.status === "succeeded" && job.version_number !== null) {
    return { phase: "done", version: job.version_number };
  }
  if (job.status === "failed") {
    return { phase: "failed", message: job.error || "The import failed." };
  }
  return { phase: "importing", job };
}

/** 0-100 for the progress bar; null when there is no measurable progress. */
export function percentOf(state: UploadState): number | null {
  if (state.phase === "sending") {
    return state.total > 0 ? Math.floor((100 * state.loaded) / state.total) : 0;
  }
  if (state.phase === "validating" || state.phase === "done") return 100;
  return null;
}

/** The message of an error answer: the API's own (which names row and column), or one
 * naming the status (a proxy's error page, a body over the size limit). */
export function errorMessage(status: number, body: string): string {
  let parsed: unknown = null;
  try {
    parsed = JSON.parse(body);
  } catch {
    // not JSON: toApiError names the status
  }
  if (status === 413 && parsed === null) return "The file is larger than this studio accepts.";
  return toApiError(parsed, new Response(null, { status })).message;
}

type XhrLike = Pick<
  XMLHttpRequest,
  "open" | "send" | "setRequestHeader" | "abort" | "status" | "responseText" | "upload"
> & {
  onload: ((this: XMLHttpRequest, ev: ProgressEvent) => unknown) | null;
  onerror: ((this: XMLHttpRequest, ev: ProgressEvent) => unknown) | null;
  onabort: ((this: XMLHttpRequest, ev: ProgressEvent) => unknown) | null;
};

export type UploadRequest = {
  datasetId: number;
  form: FormData;
  onEvent: (event: UploadEvent) => void;
  makeXhr?: () => XhrLike;
};

/** Sends the upload; resolves with the outcome, rejects with `UploadFailed`. */
export function sendUpload({
  datasetId,
  form,
  onEvent,
  makeXhr = () => new XMLHttpRequest(),
}: UploadRequest): { done: Promise<UploadOutcome>; abort: () => void } {
  const xhr = makeXhr();
  const done = new Promise<UploadOutcome>((resolve, reject) => {
    const fail = (message: string, status: number | null) => {
      onEvent({ type: "failed", message });
      reject(new UploadFailed(message, status));
    };
    xhr.open("POST", `/api/datasets/${datasetId}/versions/`);
    const token = readCsrfToken();
    if (token) xhr.setRequestHeader("X-CSRFToken", token);
    xhr.setRequestHeader("Accept", "application/json");
    xhr.upload.onprogress = (event: ProgressEvent) => {
      if (event.lengthComputable) {
        onEvent({ type: "progress", loaded: event.loaded, total: event.total });
      }
    };
    xhr.upload.onload = () => onEvent({ type: "sent" });
    xhr.onload = () => {
      if (xhr.status === 201 || xhr.status === 202) {
        let outcome: UploadOutcome;
        try {
          const body: unknown = JSON.parse(xhr.responseText);
          outcome =
            xhr.status === 201
              ? { kind: "version", version: body as DatasetVersion }
              : { kind: "import", job: body as DatasetImport };
        } catch {
          fail("The studio's answer to the upload was not JSON.", xhr.status);
          return;
        }
        onEvent({ type: "answered", outcome });
        resolve(outcome);
        return;
      }
      fail(errorMessage(xhr.status, xhr.responseText), xhr.status);
    };
    xhr.onerror = () => fail("The upload did not reach the studio (network error).", null);
    xhr.onabort = () => fail("The upload was cancelled.", null);
    const file = form.get("file");
    onEvent({ type: "start", total: file instanceof Blob ? file.size : 0 });
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}

/** Up to 1 MiB: the head of a CSV/JSONL file, the tail of a parquet file (its footer). */
export const SAMPLE_BYTES = 1024 * 1024;

export function columnSample(file: File): { sample: File; truncated: boolean } {
  const truncated = file.size > SAMPLE_BYTES;
  const parquet = /\.(parquet|pq)$/i.test(file.name);
  const blob = !truncated
    ? file
    : parquet
      ? file.slice(file.size - SAMPLE_BYTES)
      : file.slice(0, SAMPLE_BYTES);
  return { sample: new File([blob], file.name), truncated };
}

/** "row 3" and "column 'answer'" in an upload error, to point at them. */
export function errorLocation(message: string): { row: number | null; column: string | null } {
  const row = /\brow (\d+)/.exec(message);
  const column = /\bcolumn '([^']+)'/.exec(message) ?? /\bcolumn "([^"]+)"/.exec(message);
  return { row: row ? Number(row[1]) : null, column: column?.[1] ?? null };
}
