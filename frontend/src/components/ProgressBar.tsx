import styles from "./ProgressBar.module.css";

type ProgressBarProps = {
  label: string;
  /** 0-100, or null while the total is unknown (an indeterminate bar). */
  percent: number | null;
  valueText?: string;
  /** The fill's colour: the accent, or a warning or an error (a quota nearly or fully used). */
  tone?: "accent" | "warn" | "error";
};

/** A progress bar with its ARIA role and values; indeterminate when `percent` is null. */
export function ProgressBar({ label, percent, valueText, tone = "accent" }: ProgressBarProps) {
  return (
    <div
      className={styles.bar}
      role="progressbar"
      aria-label={label}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={percent ?? undefined}
      aria-valuetext={valueText}
    >
      <div className={`${styles.fill} ${styles[tone] ?? ""} ${percent === null ? styles.indeterminate : ""}`} style={percent === null ? undefined : { width: `${percent}%` }} />
    </div>
  );
}
