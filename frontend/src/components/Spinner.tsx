import styles from "./ui.module.css";

export function Spinner({ label = "Loading" }: { label?: string }) {
  return <span className={styles.spinner} role="status" aria-label={label} />;
}

/** A spinner with words, for a page or panel whose data is on its way. */
export function Loading({ what }: { what: string }) {
  return (
    <div className={styles.loading}>
      <Spinner label={`Loading ${what}`} />
      <span>Loading {what}…</span>
    </div>
  );
}

/** A grey placeholder block with the size of what will replace it. */
export function Skeleton({ height = 16, width = "100%" }: { height?: number; width?: number | string }) {
  return <div className={styles.skeleton} style={{ height, width }} aria-hidden="true" />;
}
