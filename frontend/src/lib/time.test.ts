import { describe, expect, it } from "vitest";

import { formatDuration, formatTime } from "./time";

describe("formatTime", () => {
  const at = "2026-03-07T09:05:00Z";

  it("shows a day, a day and time, or a time of day in the browser's locale", () => {
    expect(formatTime(at, "date")).toBe(new Date(at).toLocaleDateString());
    expect(formatTime(at)).toBe(new Date(at).toLocaleString());
    expect(formatTime(Date.parse(at), "clock")).toBe(new Date(at).toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" }));
  });

  it("says how long ago an instant was", () => {
    expect(formatTime(at, "age", Date.parse(at) + 3 * 60_000)).toBe("3 min ago");
  });

  it("shows a dash for an instant that is missing or unreadable", () => {
    expect(formatTime(null)).toBe("—");
    expect(formatTime("")).toBe("—");
    expect(formatTime("not a date", "date")).toBe("—");
  });
});

describe("formatDuration", () => {
  const start = "2026-03-07T09:00:00Z";
  const after = (ms: number) => new Date(Date.parse(start) + ms).toISOString();

  it("rounds to the unit people read", () => {
    expect(formatDuration(start, after(42_000))).toBe("42 s");
    expect(formatDuration(start, after(5 * 60_000))).toBe("5 min");
    expect(formatDuration(start, after(125 * 60_000))).toBe("2 h 5 min");
    expect(formatDuration(start, after(72 * 3_600_000))).toBe("3 d");
  });

  it("runs to now for an instant that has not ended, and is unknown before it started", () => {
    expect(formatDuration(start, null, Date.parse(start) + 10_000)).toBe("10 s");
    expect(formatDuration(null, null)).toBe("—");
    expect(formatDuration(after(1000), start)).toBe("—");
  });
});
