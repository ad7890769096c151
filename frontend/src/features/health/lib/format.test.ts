import { describe, expect, it } from "vitest";

import { componentInfo, formatLatency, sortComponents } from "./format";

describe("formatLatency", () => {
  it("shows sub-10 ms latencies with one decimal", () => {
    expect(formatLatency({ status: "ok", latency_ms: 3.14159, detail: "" })).toBe("3.1 ms");
  });

  it("rounds larger latencies and switches to seconds past one second", () => {
    expect(formatLatency({ status: "ok", latency_ms: 42.6, detail: "" })).toBe("43 ms");
    expect(formatLatency({ status: "error", latency_ms: 2003.5, detail: "" })).toBe("2.00 s");
  });

  it("shows a dash for disabled components, whose latency means nothing", () => {
    expect(formatLatency({ status: "disabled", latency_ms: 0, detail: "" })).toBe("—");
  });
});

describe("sortComponents", () => {
  it("puts database, broker and ray first, then others alphabetically", () => {
    const c = { status: "ok" as const, latency_ms: 1, detail: "" };
    const names = sortComponents({ zeta: c, ray: c, storage: c, database: c, broker: c }).map(
      ([name]) => name,
    );
    expect(names).toEqual(["database", "broker", "ray", "storage", "zeta"]);
  });
});

describe("componentInfo", () => {
  it("labels unknown components from their key", () => {
    expect(componentInfo("object_store").label).toBe("Object store");
  });
});
