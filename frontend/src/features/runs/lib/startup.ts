/**
 * A run attempt's startup timeline (the API's `attempts[].startup`, studio.runs.startup)
 * as the rows of its waterfall: what each phase took, and where its bar sits on a scale
 * from Create to the latest phase (or to now, while the run is still starting).
 */
import type { Schemas } from "../../../api/client";

export type Startup = Schemas["Startup"];
export type StartupPhase = Schemas["StartupPhase"];
export type PhaseName = Schemas["StartupPhaseEnum"];

/** What each phase means, in the user's words: the row reads "<label> took <seconds>". */
export const PHASE_LABELS: Record<PhaseName, string> = {
  created: "Created (entered the queue)",
  dispatched: "Picked by the queue",
  claimed: "Claimed by a worker",
  submitted: "Accepted by Ray",
  process_started: "Trainer process started",
  bootstrap_done: "Config and token fetched",
  imports_done: "Training libraries imported",
  model_loaded: "Model loaded",
  data_loaded: "Prompts loaded",
  first_validation: "Validation before training",
  first_rollout: "First rollout generated",
  first_step: "First training step",
  first_metric_reported: "First metric sent",
  first_metric_stored: "First metric stored",
};

export type WaterfallRow = {
  name: PhaseName;
  label: string;
  /** Seconds since the phase reached before it; null: the first, or not reached. */
  seconds: number | null;
  /** Seconds from Create to this phase; null: not reached. */
  offset: number | null;
  /** The bar, as fractions (0-1) of the scale: where it starts and how wide it is. */
  bar: { start: number; width: number } | null;
};

export type Waterfall = {
  rows: WaterfallRow[];
  /** Seconds the bars span: the latest phase reached, or now while still starting. */
  scale: number;
  /** Create -> first metric stored, once known. */
  total: number | null;
  /** Seconds from Create to the latest phase reached (what "so far" shows while starting). */
  elapsed: number;
};

/**
 * The rows, reached phases first in the order they happened. `nowSeconds` (unix seconds)
 * stretches the scale to the present while the attempt is still starting.
 */
export function waterfall(startup: Startup, nowSeconds: number | null = null): Waterfall {
  const reached = startup.phases.filter((p) => p.offset_s !== null);
  const elapsed = Math.max(0, ...reached.map((p) => p.offset_s ?? 0));
  const created = startup.phases.find((p) => p.name === "created")?.at ?? null;
  const sinceCreate = nowSeconds !== null && created !== null ? nowSeconds - created : 0;
  const scale = Math.max(elapsed, sinceCreate, 0.001);
  const rows = startup.phases.map((phase): WaterfallRow => {
    const offset = phase.offset_s;
    const seconds = phase.seconds;
    const bar =
      offset === null
        ? null
        : { start: Math.max(0, offset - (seconds ?? 0)) / scale, width: Math.max(0, seconds ?? 0) / scale };
    return { name: phase.name, label: PHASE_LABELS[phase.name], seconds, offset, bar };
  });
  return { rows, scale, total: startup.total_s, elapsed };
}

/** "0.42 s", "3.1 s", "12 s", "2 min 5 s": precise where startup seconds are short. */
export function formatSeconds(seconds: number): string {
  if (seconds < 1) return `${seconds.toFixed(2)} s`;
  if (seconds < 10) return `${seconds.toFixed(1)} s`;
  if (seconds < 120) return `${Math.round(seconds)} s`;
  const minutes = Math.floor(seconds / 60);
  return `${minutes} min ${Math.round(seconds - minutes * 60)} s`;
}
