/** Pure helpers for a test-run's rows: filters, histogram bins and readable errors. */
import type { Schemas } from "../../../api/client";

export type TestRow = Schemas["RewardTestRow"];

export type ErrorFilter = "all" | "errors" | "scored";

export type RowFilter = {
  errors: ErrorFilter;
  /** Inclusive score bounds; null is open. Rows with an error have no score to bound. */
  min: number | null;
  max: number | null;
};

export const NO_FILTER: RowFilter = { errors: "all", min: null, max: null };

export function filterRows(rows: readonly TestRow[], filter: RowFilter): TestRow[] {
  return rows.filter((row) => {
    const failed = row.error !== "";
    if (filter.errors === "errors" && !failed) return false;
    if (filter.errors === "scored" && (failed || row.skipped)) return false;
    if (filter.min !== null && (failed || row.score < filter.min)) return false;
    if (filter.max !== null && (failed || row.score > filter.max)) return false;
    return true;
  });
}

export type Bin = { start: number; end: number; count: number };

/** `count` equal bins over [min(0, lowest), max(1, highest)]; the last bin is closed. */
export function binScores(scores: readonly number[], count = 10): Bin[] {
  const finite = scores.filter((s) => Number.isFinite(s));
  const low = Math.min(0, ...finite);
  const high = Math.max(1, ...finite);
  const width = (high - low) / count;
  const bins: Bin[] = Array.from({ length: count }, (_, i) => ({
    start: low + i * width,
    end: low + (i + 1) * width,
    count: 0,
  }));
  for (const score of finite) {
    const index = Math.min(Math.floor((score - low) / width), count - 1);
    const bin = bins[index];
    if (bin) bin.count += 1;
  }
  return bins;
}

export function scoresOf(rows: readonly TestRow[]): number[] {
  return rows.filter((row) => row.error === "" && !row.skipped).map((row) => row.score);
}

/** The error's kind ("timeout", "exception", ...) for a short label in the table. */
export function errorKind(error: string): string {
  const match = /^([a-z ]+?):/.exec(error);
  return match?.[1] ?? "error";
}

/** The error's first line without its kind ("ZeroDivisionError: ... (line 4)"): the kind
 * is its label. */
export function errorSummary(error: string): string {
  const first = error.split("\n", 1)[0] ?? "";
  const match = /^([a-z ]+?):\s*/.exec(first);
  return match ? first.slice(match[0].length) : first;
}
