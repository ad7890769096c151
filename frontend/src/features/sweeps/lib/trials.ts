/** Reading a sweep's trials: which are live, their order, the best ones, and values in words. */
import type { Direction, ParamValue, SweepDetail, SweepStatus, Trial, TrialCounts, TrialState } from "./types";

/** How often a live sweep's detail is asked for again (ms). */
export const LIVE_POLL_MS = 2000;

/** The sweep changes on its own: it runs, or it is paused with trials still running. */
export function isLive(sweep: Pick<SweepDetail, "status" | "trials"> | undefined): boolean {
  if (!sweep) return false;
  if (sweep.status === "running") return true;
  return sweep.status === "paused" && sweep.trials.some((t) => t.state === "running");
}

export type TrialSort = { key: "number" | "value" | "steps"; descending: boolean };

/** The trials in a table's order; trials with no value sort last whichever the direction. */
export function sortTrials(trials: readonly Trial[], sort: TrialSort): Trial[] {
  const sign = sort.descending ? -1 : 1;
  const valueOf = (t: Trial) => (sort.key === "value" ? t.value : sort.key === "steps" ? t.steps : t.number);
  return [...trials].sort((a, b) => {
    const va = valueOf(a);
    const vb = valueOf(b);
    if (va === null && vb === null) return a.number - b.number;
    if (va === null) return 1;
    if (vb === null) return -1;
    return va === vb ? a.number - b.number : sign * (va - vb);
  });
}

/** The sort that shows the best value first. */
export function bestFirst(direction: Direction): TrialSort {
  return { key: "value", descending: direction === "maximize" };
}

/**
 * The run ids of the best `n` trials by the metric: complete trials first (their value is
 * final), then any others with a value.
 */
export function topRunIds(trials: readonly Trial[], direction: Direction, n: number): number[] {
  const order = bestFirst(direction);
  const complete = sortTrials(trials.filter((t) => t.state === "complete" && t.value !== null), order);
  const others = sortTrials(trials.filter((t) => t.state !== "complete" && t.value !== null), order);
  return [...complete, ...others].flatMap((t) => (t.run ? [t.run.id] : [])).slice(0, n);
}

export const TRIAL_STATES: TrialState[] = ["running", "complete", "pruned", "failed", "stopped"];

/** "2 running · 5 complete · 1 pruned" (states with no trial left out). */
export function countsLine(counts: TrialCounts): string {
  const parts = TRIAL_STATES.filter((state) => counts[state] > 0).map((state) => `${counts[state]} ${state}`);
  return parts.length ? parts.join(" · ") : "no trials yet";
}

/** A metric value at a precision that tells trials apart. */
export function formatMetric(value: number | null | undefined): string {
  if (value === null || value === undefined) return "—";
  if (value === 0) return "0";
  const size = Math.abs(value);
  // Short exponents with no trailing zeros: 3e-4, 1.23e-5.
  if (size >= 1e5 || size < 1e-3) return Number(value.toPrecision(4)).toExponential();
  return Number(value.toPrecision(4)).toString();
}

/** A parameter's value: numbers short ("0.00031", "3.1e-5"), the rest as text. */
export function formatParam(value: ParamValue | undefined): string {
  if (value === null || value === undefined) return "—";
  if (typeof value === "number") return formatMetric(value);
  return String(value);
}

export const STATUS_TONE: Record<SweepStatus, "live" | "warn" | "ok" | ""> = { running: "live", paused: "warn", stopped: "", finished: "ok" };
export const STATE_TONE: Record<TrialState, "live" | "warn" | "ok" | "error" | ""> = { running: "live", complete: "ok", pruned: "warn", failed: "error", stopped: "" };
