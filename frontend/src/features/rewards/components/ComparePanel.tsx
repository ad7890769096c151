/**
 * A/B of two versions: the shown test-run's rows scored again by another version
 * (same responses, row for row), then the rows where they disagree first.
 */
import { useMutation } from "@tanstack/react-query";
import { useState } from "react";

import { Button } from "../../../components/Button";
import { isFinished, startComparison, type RewardVersionSummary, type TestRun } from "../api";
import { useComparison, useTestRun } from "../hooks";
import styles from "./TestPanel.module.css";
import { TestRunProgress } from "./TestRunProgress";

type ComparePanelProps = {
  base: TestRun;
  versions: readonly RewardVersionSummary[];
};

function fmt(value: number | null): string {
  return value === null ? "–" : value.toFixed(3);
}

export function ComparePanel({ base, versions }: ComparePanelProps) {
  const others = versions.filter((v) => v.id !== base.reward_version);
  const [otherId, setOtherId] = useState<number | null>(null);
  const chosen = otherId ?? others[0]?.id ?? null;
  const [againId, setAgainId] = useState<number | null>(null);
  const again = useTestRun(againId);
  const ready = again.data?.status === "succeeded";
  const comparison = useComparison(base.id, againId, ready);
  const start = useMutation({
    mutationFn: () => startComparison(base.id, chosen as number),
    onSuccess: (run) => setAgainId(run.id),
  });

  if (base.status !== "succeeded") return null;
  const versionOf = (id: number) => versions.find((v) => v.id === id)?.number;
  const b = again.data ? versionOf(again.data.reward_version) : undefined;
  return (
    <section className={styles.panel} aria-label="Compare versions">
      <h2 className={styles.heading}>A/B: v{base.version_number} against another version</h2>
      {others.length === 0 ? (
        <p className={styles.muted}>Save a second version to compare it on these rows.</p>
      ) : (
        <div className={styles.row}>
          <label className={styles.field}>
            Score the same {base.result?.rows.length ?? 0} responses with
            <select aria-label="Compare with version" value={chosen ?? ""} onChange={(e) => setOtherId(Number(e.target.value))}>
              {others.map((v) => (
                <option key={v.id} value={v.id}>
                  v{v.number} {v.message ? `— ${v.message}` : ""}
                </option>
              ))}
            </select>
          </label>
          <Button
            variant="primary"
            disabled={chosen === null || start.isPending || (again.data !== undefined && !isFinished(again.data))}
            onClick={() => start.mutate()}
          >
            Compare
          </Button>
        </div>
      )}
      {start.isError ? (
        <p className={styles.errorBox} role="alert">
          {start.error.message}
        </p>
      ) : null}
      {again.data && !isFinished(again.data) ? <TestRunProgress run={again.data} /> : null}
      {again.data?.status === "failed" ? (
        <p className={styles.errorBox} role="alert">
          {again.data.error}
        </p>
      ) : null}
      {comparison.isError ? (
        <p className={styles.errorBox} role="alert">
          {comparison.error.message}
        </p>
      ) : null}
      {comparison.data ? (
        <>
          <p data-testid="ab-summary">
            <strong>{comparison.data.differing}</strong> of {comparison.data.rows.length} rows score
            differently (v{base.version_number} → v{b}).
          </p>
          <div className={styles.tableWrap}>
            <table className={styles.table} data-testid="ab-rows">
              <thead>
                <tr>
                  <th scope="col">Row</th>
                  <th scope="col">Response</th>
                  <th scope="col">Answer</th>
                  <th scope="col">v{base.version_number}</th>
                  <th scope="col">v{b}</th>
                  <th scope="col">Δ</th>
                </tr>
              </thead>
              <tbody>
                {comparison.data.rows.map((row) => (
                  <tr key={row.position} className={row.differs ? styles.failedRow : undefined}>
                    <td>
                      {row.index}
                      {row.sample !== null ? `.${row.sample}` : ""}
                    </td>
                    <td className={styles.response}>
                      <pre>{row.solution_str}</pre>
                    </td>
                    <td>
                      <code>{typeof row.ground_truth === "string" ? row.ground_truth : JSON.stringify(row.ground_truth)}</code>
                    </td>
                    <td className={styles.num} title={row.error_a}>
                      {row.error_a ? "error" : fmt(row.score_a)}
                    </td>
                    <td className={styles.num} title={row.error_b}>
                      {row.error_b ? "error" : fmt(row.score_b)}
                    </td>
                    <td
                      className={`${styles.num} ${row.delta !== null && row.delta > 0 ? styles.better : ""} ${row.delta !== null && row.delta < 0 ? styles.worse : ""}`}
                    >
                      {row.delta === null ? (row.differs ? "error" : "–") : row.delta > 0 ? `+${fmt(row.delta)}` : fmt(row.delta)}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </>
      ) : null}
    </section>
  );
}
