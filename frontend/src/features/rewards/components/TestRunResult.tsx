/** A finished test-run: summary, histogram of scores, and the filterable rows table. */
import { useMemo, useState } from "react";

import type { TestRun } from "../api";
import {
  binScores,
  errorKind,
  filterRows,
  NO_FILTER,
  scoresOf,
  type ErrorFilter,
  type RowFilter,
  type TestRow,
} from "../results";
import { ExtraInfo } from "../../../components/ExtraInfo";
import { BinsChart } from "./BinsChart";
import styles from "./TestPanel.module.css";

function fmt(value: number | null | undefined, digits = 3): string {
  return value === null || value === undefined ? "–" : value.toFixed(digits);
}

function parseBound(text: string): number | null {
  if (text.trim() === "") return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

export function TestRunResult({ run }: { run: TestRun }) {
  const [filter, setFilter] = useState<RowFilter>(NO_FILTER);
  const [minText, setMinText] = useState("");
  const [maxText, setMaxText] = useState("");
  const rows = useMemo(() => run.result?.rows ?? [], [run]);
  const scores = useMemo(() => scoresOf(rows), [rows]);
  const bins = useMemo(() => binScores(scores), [scores]);
  const scored = scores.length;
  const shown = useMemo(() => filterRows(rows, filter), [rows, filter]);
  const summary = run.result?.summary ?? run.summary;

  return (
    <section className={styles.result} aria-label="Test-run result" data-test-run-id={run.id}>
      {run.status === "failed" ? (
        <p className={styles.errorBox} role="alert">
          {run.error || "The test-run failed."}
        </p>
      ) : null}
      {summary ? (
        <dl className={styles.summary}>
          <div>
            <dt>Mean</dt>
            <dd>{fmt(summary.mean)}</dd>
          </div>
          <div>
            <dt>Std</dt>
            <dd>{fmt(summary.std)}</dd>
          </div>
          <div>
            <dt>Error rate</dt>
            <dd>{(summary.error_rate * 100).toFixed(0)}%</dd>
          </div>
          <div>
            <dt>Rows</dt>
            <dd>
              {summary.scored} scored · {summary.failed} failed
              {summary.skipped ? ` · ${summary.skipped} skipped` : ""}
            </dd>
          </div>
        </dl>
      ) : null}
      {scored > 0 ? <BinsChart bins={bins} xTitle="score" label="Scores" /> : null}
      {rows.length > 0 && scored === 0 ? (
        <p className={styles.muted}>No row scored, so there is no histogram: see the errors below.</p>
      ) : null}
      {rows.length > 0 ? (
        <>
          <div className={styles.filters} role="group" aria-label="Filter rows">
            <label>
              Show{" "}
              <select aria-label="Show rows"
                value={filter.errors}
                onChange={(e) => setFilter({ ...filter, errors: e.target.value as ErrorFilter })}
              >
                <option value="all">all rows</option>
                <option value="errors">errors only</option>
                <option value="scored">scored only</option>
              </select>
            </label>
            <label>
              Score ≥{" "}
              <input
                inputMode="decimal"
                size={5}
                value={minText}
                onChange={(e) => {
                  setMinText(e.target.value);
                  setFilter({ ...filter, min: parseBound(e.target.value) });
                }}
              />
            </label>
            <label>
              ≤{" "}
              <input
                inputMode="decimal"
                size={5}
                aria-label="Score at most"
                value={maxText}
                onChange={(e) => {
                  setMaxText(e.target.value);
                  setFilter({ ...filter, max: parseBound(e.target.value) });
                }}
              />
            </label>
            <span className={styles.count}>
              {shown.length} of {rows.length} rows
            </span>
          </div>
          <RowsTable rows={shown} />
        </>
      ) : null}
    </section>
  );
}

function RowsTable({ rows }: { rows: readonly TestRow[] }) {
  return (
    <div className={styles.tableWrap}>
      <table className={styles.table} data-testid="test-rows">
        <thead>
          <tr>
            <th scope="col">Row</th>
            <th scope="col">Response</th>
            <th scope="col">Answer</th>
            <th scope="col">Score</th>
            <th scope="col">Components</th>
            <th scope="col">Time</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row, i) => (
            <tr key={`${row.index}-${row.sample ?? 0}-${i}`} className={row.error ? styles.failedRow : undefined}>
              <td>
                {row.index}
                {row.sample !== null ? `.${row.sample}` : ""}
              </td>
              <td className={styles.response}>
                <pre>{row.solution_str}</pre>
                <ExtraInfo extra={row.extra} label={`Extra info of row ${row.index}`} />
                {row.error ? (
                  <details className={styles.errorDetails}>
                    <summary>
                      <span className={styles.errorKind}>{errorKind(row.error)}</span> {row.error}
                    </summary>
                    {row.output ? <pre className={styles.traceback}>{row.output}</pre> : null}
                  </details>
                ) : row.output ? (
                  <details>
                    <summary>printed output</summary>
                    <pre className={styles.traceback}>{row.output}</pre>
                  </details>
                ) : null}
              </td>
              <td>
                <code>{typeof row.ground_truth === "string" ? row.ground_truth : JSON.stringify(row.ground_truth)}</code>
              </td>
              <td className={styles.num}>{row.skipped ? "skipped" : row.error ? "error" : fmt(row.score)}</td>
              <td className={styles.components}>
                {Object.entries(row.components)
                  .map(([name, value]) => `${name}=${fmt(value, 2)}`)
                  .join(" ")}
              </td>
              <td className={styles.num}>{row.elapsed_ms.toFixed(1)} ms</td>
            </tr>
          ))}
        </tbody>
      </table>
      {rows.length === 0 ? <p className={styles.muted}>No rows match these filters.</p> : null}
    </div>
  );
}
