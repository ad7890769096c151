import ui from "../../../components/ui.module.css";
import { STATE_TONE, STATUS_TONE } from "../lib/trials";
import type { SweepStatus, TrialState } from "../lib/types";

function toneClass(tone: string): string {
  return tone ? (ui[tone] ?? "") : "";
}

export function SweepStatusPill({ status }: { status: SweepStatus }) {
  return (
    <span className={`${ui.pill} ${toneClass(STATUS_TONE[status])}`} data-status={status}>
      {status}
    </span>
  );
}

export function TrialStatePill({ state }: { state: TrialState }) {
  return (
    <span className={`${ui.pill} ${toneClass(STATE_TONE[state])}`} data-state={state}>
      {state}
    </span>
  );
}
