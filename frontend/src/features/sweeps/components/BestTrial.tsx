import { Link } from "react-router";

import ui from "../../../components/ui.module.css";
import { formatValue } from "../../runs/lib/configDiff";
import styles from "../sweeps.module.css";
import { formatMetric } from "../lib/trials";
import type { SweepDetail } from "../lib/types";
import { paramCell } from "./TrialsTable";
import { TrialStatePill } from "./SweepStatus";

/** A config value: numbers as the trials table shows them (1e-6, not 0.000001). */
function shown(value: unknown): string {
  return typeof value === "number" ? formatMetric(value) : formatValue(value);
}

/** The best trial so far: its value, run and parameters, and how its config differs from the base's. */
export function BestTrial({ sweep, slug }: { sweep: SweepDetail; slug: string }) {
  const best = sweep.best_trial;
  const base = sweep.base_run ? `run #${sweep.base_run.id}` : `preset ${sweep.preset}`;
  return (
    <section className={styles.card} aria-label="Best trial" data-testid="best-trial">
      <h2 className={styles.cardTitle}>
        Best trial so far
        <span className={styles.cardNote}>
          {sweep.metric_label}, {sweep.direction === "maximize" ? "highest" : "lowest"}
        </span>
      </h2>
      {best === null ? (
        <p className={ui.muted}>No trial has a value yet: the best one shows here as soon as one reports {sweep.metric_label}.</p>
      ) : (
        <>
          <div className={ui.row} style={{ marginBottom: 8 }}>
            <span className={styles.bestValue} data-testid="best-value">
              {formatMetric(best.value)}
            </span>
            <span>trial #{best.number}</span>
            <TrialStatePill state={best.state} />
            {best.run ? <Link to={`/p/${slug}/runs/${best.run.id}`}>{best.run.name}</Link> : null}
          </div>
          <dl className={ui.extraInfo} style={{ marginBottom: 10 }}>
            {sweep.space.map((param) => (
              <div key={param.name}>
                <dt className={ui.mono}>{param.name}</dt>
                <dd>{paramCell(param, best)}</dd>
              </div>
            ))}
          </dl>
          {best.config_diff.length ? (
            <div className={ui.tableWrap}>
              <table className={`${ui.table} ${styles.diff}`} aria-label={`Config of trial #${best.number} against ${base}`}>
                <thead>
                  <tr>
                    <th scope="col">Field</th>
                    <th scope="col">{base}</th>
                    <th scope="col">Trial #{best.number}</th>
                  </tr>
                </thead>
                <tbody>
                  {best.config_diff.map((change) => (
                    <tr key={change.path}>
                      <td>
                        <code className={ui.mono}>{change.path}</code>
                      </td>
                      <td>{shown(change.base)}</td>
                      <td>
                        <strong>{shown(change.value)}</strong>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className={ui.muted}>Its config is the base&apos;s ({base}): only its inputs differ.</p>
          )}
        </>
      )}
    </section>
  );
}
