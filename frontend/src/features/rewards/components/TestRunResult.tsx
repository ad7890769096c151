/** A finished test-run: summary, histogram of scores, and the filterable rows table. */
import { useMemo, useState } from "react";

import { ExtraInfo } from "../../../components/ExtraInfo";
import { Notice } from "../../../components/Notice";
import { Facts } from "../../../components/Facts";
import { Table } from "../../../components/Table";
import ui from "../../../components/ui.module.css";
import type { TestRun } from "../api";
import { binScores, errorKind, errorSummary, filterRows, NO_FILTER, scoresOf, type ErrorFilter, type RowFilter, type TestRow } from "../lib/results";
import { BinsChart } from "./BinsChart";
import { scoredColumns } from "./scoredColumns";
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
        <Notice tone="error">{run.error || "The test-run failed."}</Notice>
      ) : null}
      {summary ? (
        <Facts
          tileWidth={110}
          facts={[
            { label: "Mean", value: fmt(summary.mean) },
            { label: "Std", value: fmt(summary.std) },
            { label: "Error rate", value: `${(summary.error_rate * 100).toFixed(0)}%` },
            { label: "Rows", value: `${summary.scored} scored · ${summary.failed} failed${summary.skipped ? ` · ${summary.skipped} skipped` : ""}` },
          ]}
        />
      ) : null}
      {scored > 0 ? <BinsChart bins={bins} xTitle="score" label="Scores" /> : null}
      {rows.length > 0 && scored === 0 ? (
        <p className={ui.muted}>No row scored, so there is no histogram: see the errors below.</p>
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
  const keyed = rows.map((row, i) => ({ ...row, key: `${row.index}-${row.sample ?? 0}-${i}` }));
  return (
    <>
      <Table
        testId="test-rows"
        maxHeight={520}
        rows={keyed}
        rowKey={(row) => row.key}
        rowClass={(row) => (row.error ? styles.failedRow : undefined)}
        columns={[
          ...scoredColumns<(typeof keyed)[number]>((row) => (
            <>
              <ExtraInfo extra={row.extra} label={`Extra info of row ${row.index}`} />
              {row.error ? (
                <details className={styles.errorDetails}>
                  <summary>
                    <span className={styles.errorKind}>{errorKind(row.error)}</span> {errorSummary(row.error)}
                  </summary>
                  {row.output ? <pre className={styles.traceback}>{row.output}</pre> : null}
                </details>
              ) : row.output ? (
                <details>
                  <summary>printed output</summary>
                  <pre className={styles.traceback}>{row.output}</pre>
                </details>
              ) : null}
            </>
          )),
          {
            key: "score",
            header: "Score",
            cellProps: () => ({ className: styles.num }),
            // The call's time under its score: one column fewer in a narrow panel.
            cell: (row) => (
              <>
                {row.skipped ? "skipped" : row.error ? "error" : fmt(row.score)}
                <span className={styles.elapsed}>{row.elapsed_ms.toFixed(1)} ms</span>
              </>
            ),
          },
          {
            key: "components",
            header: "Components",
            cellProps: () => ({ className: styles.components }),
            cell: (row) =>
              Object.entries(row.components)
                .map(([name, value]) => `${name}=${fmt(value, 2)}`)
                .join("\n"), // one a line: the column stays narrow beside the response
          },
        ]}
      />
      {rows.length === 0 ? <p className={ui.muted}>No rows match these filters.</p> : null}
    </>
  );
}
