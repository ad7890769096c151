import { describe, expect, it } from "vitest";

import { sweepDetail, sweepTrials } from "../fixtures";
import { countsLine, formatMetric, isLive, sortTrials, topRunIds } from "./trials";

describe("isLive", () => {
  it("polls a running sweep, and a paused one only while trials still run", () => {
    expect(isLive(sweepDetail)).toBe(true);
    expect(isLive({ ...sweepDetail, status: "paused" })).toBe(true); // trial 3 runs
    expect(isLive({ ...sweepDetail, status: "paused", trials: sweepTrials.filter((t) => t.state !== "running") })).toBe(false);
    expect(isLive({ ...sweepDetail, status: "finished" })).toBe(false);
    expect(isLive(undefined)).toBe(false);
  });
});

describe("sortTrials", () => {
  it("sorts by the metric either way, trials with no value last", () => {
    expect(sortTrials(sweepTrials, { key: "value", descending: true }).map((t) => t.number)).toEqual([1, 3, 0, 2, 4]);
    expect(sortTrials(sweepTrials, { key: "value", descending: false }).map((t) => t.number)).toEqual([2, 0, 3, 1, 4]);
    expect(sortTrials(sweepTrials, { key: "number", descending: true }).map((t) => t.number)).toEqual([4, 3, 2, 1, 0]);
  });
});

describe("topRunIds", () => {
  it("takes the best complete trials first, then others with a value", () => {
    expect(topRunIds(sweepTrials, "maximize", 3)).toEqual([101, 100, 103]);
    expect(topRunIds(sweepTrials, "minimize", 2)).toEqual([100, 101]);
  });
});

describe("countsLine and formatMetric", () => {
  it("say the counts and values short", () => {
    expect(countsLine(sweepDetail.trial_counts)).toBe("1 running · 2 complete · 1 pruned · 1 failed");
    expect(countsLine({ running: 0, complete: 0, pruned: 0, failed: 0, stopped: 0 })).toBe("no trials yet");
    expect([formatMetric(0.8123456), formatMetric(null), formatMetric(3e-5), formatMetric(1234.5), formatMetric(123456)]).toEqual(["0.8123", "—", "3e-5", "1235", "1.235e+5"]);
  });
});
