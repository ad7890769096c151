import ui from "../../../components/ui.module.css";
import type { RunStatus } from "../api";

const TONE: Record<RunStatus, string> = {
  queued: "",
  starting: "live",
  running: "live",
  cancelling: "warn",
  succeeded: "ok",
  failed: "error",
  cancelled: "",
};

export function RunStatusPill({ status }: { status: RunStatus }) {
  const tone = TONE[status];
  return (
    <span className={`${ui.pill} ${tone ? (ui[tone] ?? "") : ""}`} data-status={status}>
      {status}
    </span>
  );
}

/** "reward errors: 25% of rows" when some of a run's reward calls failed (nothing at 0):
 * a run that succeeds with a partly failing reward must not look healthy. */
export function RewardErrorBadge({ rate }: { rate: number | null | undefined }) {
  if (rate === null || rate === undefined || !(rate > 0)) return null;
  const shown = errorPercent(rate);
  return (
    <span className={`${ui.pill} ${ui.warn ?? ""}`} data-reward-errors={rate} title="The share of scored rows whose reward function raised or returned something invalid">
      reward errors: {shown}% of rows
    </span>
  );
}

/** A share of failed rows as a percent that never rounds to 0 or 100 when it is not. */
export function errorPercent(rate: number): string {
  const percent = rate * 100;
  if (percent > 0 && percent < 1) return "<1";
  if (percent > 99 && percent < 100) return ">99";
  return String(Math.round(percent));
}
