import ui from "../../../components/ui.module.css";
import styles from "../sweeps.module.css";
import { importanceRows } from "../lib/charts";
import type { SweepDetail } from "../lib/types";

/** How much each parameter moved the metric, by the method the server names (Optuna's). */
export function Importance({ importance, complete }: { importance: SweepDetail["importance"]; complete: number }) {
  return (
    <section className={styles.card} aria-label="Parameter importance" data-testid="importance">
      <h2 className={styles.cardTitle}>
        Parameter importance
        {importance ? <span className={styles.cardNote}>by {importance.method} (Optuna)</span> : null}
      </h2>
      {importance === null ? (
        <p className={ui.muted}>Shown once 4 trials have completed ({complete} so far) and a parameter took more than one value: fewer say little about which parameter matters.</p>
      ) : (
        <ImportanceBars values={importance.values} />
      )}
    </section>
  );
}

function ImportanceBars({ values }: { values: Record<string, number> }) {
  const rows = importanceRows(values);
  const top = Math.max(...rows.map((r) => r.value), 1e-12);
  return (
    <ol className={styles.bars}>
      {rows.map((row) => (
        <li key={row.name} className={styles.bar}>
          <span className={styles.barName}>{row.name}</span>
          <span className={styles.barTrack} aria-hidden="true">
            <span className={styles.barFill} style={{ display: "block", width: `${Math.max(0, (row.value / top) * 100)}%` }} />
          </span>
          <span className={styles.barValue}>{row.value.toFixed(2)}</span>
        </li>
      ))}
    </ol>
  );
}
