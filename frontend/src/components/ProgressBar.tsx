import styles from "./ProgressBar.module.css";

type ProgressBarProps = {
  label: string;
  /** 0-100, or null while the total is unknown (an indeterminate bar). */
  percent: number | null;
  valueText?: string;
};

/** A progress bar with its ARIA role and values; indeterminate when `percent` is null. */
export function ProgressBar({ label, percent, valueText }: ProgressBarProps) {
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
      <div className={`${styles.fill} ${percent === null ? styles.indeterminate : ""}`} style={percent === null ? undefined : { width: `${percent}%` }} />
    </div>
  );
}
