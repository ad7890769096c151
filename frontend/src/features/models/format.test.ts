import { describe, expect, it } from "vitest";

import { model } from "./fixtures";
import { downloadProgress, formatBytes, formatParameters, isPending, modelFacts, progressLine } from "./format";

describe("formatParameters", () => {
  it("says counts the way people do", () => {
    expect(formatParameters(3_300_000)).toBe("3.3M");
    expect(formatParameters(3_342_912)).toBe("3.3M");
    expect(formatParameters(494_032_768)).toBe("494M");
    expect(formatParameters(1_543_714_304)).toBe("1.5B");
    expect(formatParameters(7_000_000_000)).toBe("7B");
    expect(formatParameters(12_460)).toBe("12.5K");
    expect(formatParameters(950)).toBe("950");
    expect(formatParameters(null)).toBe("–");
  });
});

describe("formatBytes", () => {
  it("uses binary units", () => {
    expect(formatBytes(0)).toBe("0 B");
    expect(formatBytes(1536)).toBe("1.5 KiB");
    expect(formatBytes(988 * 1024 * 1024)).toBe("988 MiB");
  });
});

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
