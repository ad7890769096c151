import { describe, expect, it } from "vitest";

import { formatBytes, formatParameters } from "./units";

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
