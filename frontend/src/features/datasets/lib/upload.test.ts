import { describe, expect, it } from "vitest";

import {
  columnSample,
  errorLocation,
  errorMessage,
  percentOf,
  SAMPLE_BYTES,
  sendUpload,
  uploadReducer,
  type DatasetImport,
  type UploadEvent,
  type UploadState,
} from "./upload";

function job(status: DatasetImport["status"], extra: Partial<DatasetImport> = {}): DatasetImport {
  return {
    id: 1,
    dataset: 2,
    status,
    filename: "big.csv",
    size_bytes: 10,
    message: "",
    error: "",
    version_number: null as unknown as number, // the schema omits its null (until it succeeds)
    created_at: "",
    started_at: null,
    finished_at: null,
    ...extra,
  };
}

function run(events: UploadEvent[]): UploadState {
  return events.reduce(uploadReducer, { phase: "idle" } as UploadState);
}

/** A scripted XMLHttpRequest: the test drives its upload progress and its answer. */
class FakeXhr {
  upload: { onprogress: ((e: ProgressEvent) => void) | null; onload: (() => void) | null } = {
    onprogress: null,
    onload: null,
  };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;
  status = 0;
  responseText = "";
  sent: unknown = null;
  url = "";
  open(_method: string, url: string) {
    this.url = url;
  }
  setRequestHeader() {}
  send(body: unknown) {
    this.sent = body;
  }
  abort() {
    this.onabort?.();
  }
  progress(loaded: number, total: number) {
    this.upload.onprogress?.({ lengthComputable: true, loaded, total } as ProgressEvent);
  }
  answer(status: number, body: unknown) {
    this.upload.onload?.();
    this.status = status;
    this.responseText = typeof body === "string" ? body : JSON.stringify(body);
    this.onload?.();
  }
}

describe("upload progress", () => {
  it("goes from sending to validating to done for a file validated in the request", () => {
    let state = run([{ type: "start", total: 200 }, { type: "progress", loaded: 50, total: 200 }]);
    expect(percentOf(state)).toBe(25);
    state = uploadReducer(state, { type: "sent" });
    expect(state.phase).toBe("validating");
    expect(percentOf(state)).toBe(100);
    state = uploadReducer(state, {
      type: "answered",
      outcome: { kind: "version", version: { number: 3 } as never },
    });
    expect(state).toEqual({ phase: "done", version: 3 });
  });

  it("follows a worker's import of a large file to its version or its error", () => {
    const importing = run([
      { type: "start", total: 10 },
      { type: "sent" },
      { type: "answered", outcome: { kind: "import", job: job("queued") } },
    ]);
    expect(importing.phase).toBe("importing");
    expect(percentOf(importing)).toBeNull();
    const running = uploadReducer(importing, { type: "import", job: job("running") });
    expect(running).toMatchObject({ phase: "importing", job: { status: "running" } });
    expect(uploadReducer(running, { type: "import", job: job("succeeded", { version_number: 4 }) }))
      .toEqual({ phase: "done", version: 4 });
    expect(
      uploadReducer(running, { type: "import", job: job("failed", { error: "big.csv, row 9: x" }) }),
    ).toEqual({ phase: "failed", message: "big.csv, row 9: x" });
  });

  it("ignores progress events that arrive after the answer", () => {
    const done = run([
      { type: "start", total: 10 },
      { type: "answered", outcome: { kind: "version", version: { number: 1 } as never } },
      { type: "progress", loaded: 5, total: 10 },
    ]);
    expect(done.phase).toBe("done");
  });

  it("sends the form, reports progress and resolves with the created version", async () => {
    const xhr = new FakeXhr();
    const events: UploadEvent[] = [];
    const form = new FormData();
    form.set("file", new File(["a,b\n1,2\n"], "x.csv"));
    const { done } = sendUpload({
      datasetId: 5,
      form,
      onEvent: (e) => events.push(e),
      makeXhr: () => xhr as never,
    });
    expect(xhr.url).toBe("/api/datasets/5/versions/");
    expect(xhr.sent).toBe(form);
    xhr.progress(4, 8);
    xhr.answer(201, { number: 2 });
    await expect(done).resolves.toEqual({ kind: "version", version: { number: 2 } });
    expect(events.map((e) => e.type)).toEqual(["start", "progress", "sent", "answered"]);
    expect(events.reduce(uploadReducer, { phase: "idle" } as UploadState)).toEqual({
      phase: "done",
      version: 2,
    });
  });

  it("rejects with the API's message naming the row and column", async () => {
    const xhr = new FakeXhr();
    const events: UploadEvent[] = [];
    const { done } = sendUpload({
      datasetId: 5,
      form: new FormData(),
      onEvent: (e) => events.push(e),
      makeXhr: () => xhr as never,
    });
    const message = "file: broken.csv, row 3, column 'answer': empty value";
    xhr.answer(400, { error: { code: "validation_error", message } });
    await expect(done).rejects.toThrow(message);
    expect(events.at(-1)).toEqual({ type: "failed", message });
    expect(errorLocation(message)).toEqual({ row: 3, column: "answer" });
  });

  it("names a network failure and a non-JSON error page", async () => {
    const xhr = new FakeXhr();
    const { done } = sendUpload({
      datasetId: 5,
      form: new FormData(),
      onEvent: () => {},
      makeXhr: () => xhr as never,
    });
    xhr.onerror?.();
    await expect(done).rejects.toThrow("network error");
    expect(errorMessage(413, "<html>")).toBe("The file is larger than this studio accepts.");
    expect(errorMessage(502, "<html>")).toBe("The studio answered 502.");
  });

  it("samples the head of a text file and the tail of a parquet file", async () => {
    const big = "x".repeat(SAMPLE_BYTES + 10);
    const csv = columnSample(new File(["h\n" + big], "a.csv"));
    expect(csv.truncated).toBe(true);
    expect(csv.sample.size).toBe(SAMPLE_BYTES);
    expect((await csv.sample.slice(0, 2).text())).toBe("h\n");
    const parquet = columnSample(new File([big + "PAR1"], "a.parquet"));
    expect(await parquet.sample.slice(-4).text()).toBe("PAR1");
    const small = columnSample(new File(["a,b\n"], "s.csv"));
    expect(small.truncated).toBe(false);
  });
});
