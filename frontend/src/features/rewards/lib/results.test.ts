import { describe, expect, it } from "vitest";

import { binScores, errorKind, errorSummary, filterRows, NO_FILTER, scoresOf, type TestRow } from "./results";

function row(score: number, error = "", skipped = false): TestRow {
  return {
    index: 0,
    sample: null,
    finish_reason: "",
    data_source: "d",
    prompt: null,
    solution_str: "s",
    ground_truth: "1",
    score,
    components: {},
    error,
    elapsed_ms: 1,
    output: "",
    skipped,
  };
}

const ROWS = [row(1), row(0.5), row(0, "timeout: the call ran longer than 2 s"), row(0)];

describe("test-run rows", () => {
  it("filters errors, scored rows and score ranges", () => {
    expect(filterRows(ROWS, NO_FILTER)).toHaveLength(4);
    expect(filterRows(ROWS, { ...NO_FILTER, errors: "errors" })).toEqual([ROWS[2]]);
    expect(filterRows(ROWS, { ...NO_FILTER, errors: "scored" })).toHaveLength(3);
    expect(filterRows(ROWS, { errors: "all", min: 0.5, max: null })).toEqual([ROWS[0], ROWS[1]]);
    expect(filterRows(ROWS, { errors: "all", min: null, max: 0.2 })).toEqual([ROWS[3]]);
  });

  it("bins the scores of rows that scored, over at least [0, 1]", () => {
    const bins = binScores(scoresOf(ROWS), 4);
    expect(bins.map((b) => b.count)).toEqual([1, 0, 1, 1]);
    expect(bins[0]).toMatchObject({ start: 0, end: 0.25 });
    const wide = binScores([-1, 3], 4);
    expect(wide[0]!.start).toBe(-1);
    expect(wide[3]!.end).toBe(3);
    expect(binScores([], 10).every((b) => b.count === 0)).toBe(true);
  });

  it("labels errors by their kind", () => {
    expect(errorKind("timeout: the call ran longer than 2 s")).toBe("timeout");
    expect(errorKind("invalid return: value is nan")).toBe("invalid return");
    expect(errorKind("???")).toBe("error");
  });

  it("summarises an error without its kind, on one line", () => {
    const raised = 'exception: ZeroDivisionError: division by zero (line 4)\nTraceback (most recent call last):\n  File "reward.py", line 4, in compute_score';
    expect(errorSummary(raised)).toBe("ZeroDivisionError: division by zero (line 4)");
    expect(errorSummary("???")).toBe("???");
  });
});
