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

/** "3 min", "2 h 5 min": how long between two instants (or until now). */
export function formatDuration(fromIso: string | null, toIso: string | null, now = Date.now()): string {
  if (!fromIso) return "—";
  const ms = (toIso ? Date.parse(toIso) : now) - Date.parse(fromIso);
  if (!Number.isFinite(ms) || ms < 0) return "—";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d`;
}

export function formatAge(iso: string, now = Date.now()): string {
  const d = formatDuration(iso, null, now);
  return d === "—" ? d : `${d} ago`;
}

