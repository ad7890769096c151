/**
 * From a reward-hacking alert to its evidence in the explorer: the alert's window
 * of steps, narrowed to what raised it (zero-spread groups, reward errors, the
 * dominating reward component shown beside each score).
 */
import { NO_FILTERS, writeFilters } from "./explorerQuery";

export type AlertLike = {
  kind?: string;
  step: number | null;
  evidence?: { step_min: number; step_max: number; component?: string | null } | null;
};

/** The explorer's query string (without "?") for an alert's evidence. */
export function evidenceSearch(alert: AlertLike): string {
  const last = alert.evidence?.step_max ?? alert.step;
  const first = alert.evidence?.step_min ?? last;
  const filters = { ...NO_FILTERS, stepMin: first, stepMax: last };
  if (alert.kind === "zero_spread_groups") filters.signal = "zero";
  if (alert.kind === "reward_errors") filters.errorsOnly = true;
  if (alert.evidence?.component) filters.component = alert.evidence.component;
  return writeFilters(filters).toString();
}
