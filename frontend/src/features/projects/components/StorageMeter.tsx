import { Notice } from "../../../components/Notice";
import { ProgressBar } from "../../../components/ProgressBar";
import { formatBytes } from "../../../lib/units";
import type { ProjectStorage } from "../api";
import { useProjectStorage } from "../hooks";
import styles from "./StorageMeter.module.css";

/** From this share of the quota the meter turns to a warning. */
const NEARLY_FULL = 80;

/** What each kind of file takes, for the meter's tooltip. */
function breakdown({ by_kind: kinds }: ProjectStorage): string {
  return `Runs ${formatBytes(kinds.runs)} · evaluations ${formatBytes(kinds.evaluations)} · datasets ${formatBytes(kinds.datasets)} · hub models ${formatBytes(kinds.models)}`;
}

/** The project's storage against its quota, small enough for a page header. */
export function StorageMeter({ slug }: { slug: string }) {
  const storage = useProjectStorage(slug);
  if (!storage.data) return null;
  return <StorageGauge storage={storage.data} />;
}

export function StorageGauge({ storage }: { storage: ProjectStorage }) {
  const { used_bytes: used, quota_bytes: quota, over_quota: over } = storage;
  const percent = quota > 0 ? Math.min(100, (used / quota) * 100) : null;
  const figures = quota > 0 ? `${formatBytes(used)} of ${formatBytes(quota)}` : `${formatBytes(used)} used`;
  const tone = over ? "error" : percent !== null && percent >= NEARLY_FULL ? "warn" : "accent";
  return (
    <div className={styles.meter} title={breakdown(storage)} data-testid="storage-meter">
      <span className={styles.figures}>
        Storage <strong>{figures}</strong>
        {quota > 0 ? null : <span className={styles.none}> (no quota)</span>}
      </span>
      {percent !== null ? <ProgressBar label="Project storage used" percent={percent} valueText={figures} tone={tone} /> : null}
    </div>
  );
}

/** Said under the header when the project is at or over its quota: why new runs are refused, and what frees space. */
export function StorageQuotaNotice({ slug }: { slug: string }) {
  const storage = useProjectStorage(slug).data;
  if (!storage?.over_quota) return null;
  return (
    <Notice tone="error" className={styles.notice}>
      This project uses {formatBytes(storage.used_bytes)} of its {formatBytes(storage.quota_bytes)} storage quota, so new runs are refused. Delete runs you no longer need to free space (their checkpoints go with them); archiving hides a run but frees nothing.
    </Notice>
  );
}
