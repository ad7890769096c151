import { describe, expect, it } from "vitest";

import { model } from "../fixtures";
import { downloadProgress, isPending, modelFacts, progressLine } from "./format";

describe("modelFacts", () => {
  it("reads the info fields it knows and ignores odd values", () => {
    expect(modelFacts(model())).toMatchObject({ architecture: "Qwen2ForCausalLM", parameters: 3_300_000 });
    expect(modelFacts(model({ info: { parameters: "many", architecture: 3 } }))).toEqual({
      architecture: "",
      modelType: "",
      parameters: null,
      tokenizer: "",
      chatTemplate: "",
    });
  });
});

describe("download progress", () => {
  it("gives a percent once the total is known, and a line with bytes and files", () => {
    const p = downloadProgress(model({ progress: { files_done: 1, files_total: 3, bytes_done: 512 * 1024, bytes_total: 2048 * 1024 } }));
    expect(p.percent).toBe(25);
    expect(progressLine(p)).toBe("512 KiB of 2.0 MiB · 1 of 3 files");
    const unknown = downloadProgress(model({ progress: {} }));
    expect(unknown.percent).toBeNull();
    expect(progressLine(unknown)).toBe("");
  });

  it("polls queued and downloading models only", () => {
    expect(isPending("queued")).toBe(true);
    expect(isPending("downloading")).toBe(true);
    expect(isPending("ready")).toBe(false);
    expect(isPending("failed")).toBe(false);
  });
});
