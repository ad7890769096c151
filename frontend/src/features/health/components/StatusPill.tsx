import styles from "./StatusPill.module.css";

export type PillStatus = "ok" | "error" | "disabled" | "degraded" | "unreachable";

const LABELS: Record<PillStatus, string> = {
  ok: "Operational",
  error: "Error",
  disabled: "Disabled",
  degraded: "Degraded",
  unreachable: "Unreachable",
};

/** A coloured pill with a dot; the text carries the meaning, colour only repeats it. */
export function StatusPill({ status }: { status: PillStatus }) {
  return (
    <span className={`${styles.pill} ${styles[status]}`} data-status={status}>
      <span className={styles.dot} aria-hidden="true" />
      {LABELS[status]}
    </span>
  );
}
