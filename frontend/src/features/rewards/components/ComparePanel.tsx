/**
 * A/B of two versions: the shown test-run's rows scored again by another version
 * (same responses, row for row), then the rows where they disagree first.
 */
import { useState } from "react";

import { Button } from "../../../components/Button";
import { Notice } from "../../../components/Notice";
import { SelectField } from "../../../components/Field";
import { Card, FormRow } from "../../../components/Layout";
import { Table } from "../../../components/Table";
import { isFinished, type RewardVersionSummary, type TestRun } from "../api";
import { useComparison, useStartComparison, useTestRun } from "../hooks";
import ui from "../../../components/ui.module.css";
import styles from "./TestPanel.module.css";
import { scoredColumns } from "./scoredColumns";
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
  const start = useStartComparison();

  if (base.status !== "succeeded") return null;
  const versionOf = (id: number) => versions.find((v) => v.id === id)?.number;
  const b = again.data ? versionOf(again.data.reward_version) : undefined;
  return (
    <Card label="Compare versions" title={<>A/B: v{base.version_number} against another version</>}>
      {others.length === 0 ? (
        <p className={ui.muted}>Save a second version to compare it on these rows.</p>
      ) : (
        <FormRow>
          <SelectField
            label={`Score the same ${base.result?.rows.length ?? 0} responses with`}
            aria-label="Compare with version"
            value={chosen ?? ""}
            onChange={(value) => setOtherId(Number(value))}
          >
            {others.map((v) => (
              <option key={v.id} value={v.id}>
                v{v.number} {v.message ? `— ${v.message}` : ""}
              </option>
            ))}
          </SelectField>
          <Button
            variant="primary"
            disabled={chosen === null || start.isPending || (again.data !== undefined && !isFinished(again.data))}
            onClick={() => start.mutate({ base: base.id, version: chosen as number }, { onSuccess: (run) => setAgainId(run.id) })}
          >
            Compare
          </Button>
        </FormRow>
      )}
      {start.isError ? (
        <Notice tone="error">{start.error.message}</Notice>
      ) : null}
      {again.data && !isFinished(again.data) ? <TestRunProgress run={again.data} /> : null}
      {again.data?.status === "failed" ? (
        <Notice tone="error">{again.data.error}</Notice>
      ) : null}
      {comparison.isError ? (
        <Notice tone="error">{comparison.error.message}</Notice>
      ) : null}
      {comparison.data ? (
        <>
          <p data-testid="ab-summary">
            <strong>{comparison.data.differing}</strong> of {comparison.data.rows.length} rows score
            differently (v{base.version_number} → v{b}).
          </p>
          <Table
            testId="ab-rows"
            maxHeight={520}
            rows={comparison.data.rows}
            rowKey={(row) => row.position}
            rowClass={(row) => (row.differs ? styles.failedRow : undefined)}
            columns={[
              ...scoredColumns<(typeof comparison.data.rows)[number]>(),
              { key: "a", header: `v${base.version_number}`, cellProps: (row) => ({ className: styles.num, title: row.error_a }), cell: (row) => (row.error_a ? "error" : fmt(row.score_a)) },
              { key: "b", header: `v${b}`, cellProps: (row) => ({ className: styles.num, title: row.error_b }), cell: (row) => (row.error_b ? "error" : fmt(row.score_b)) },
              {
                key: "delta",
                header: "Δ",
                cellProps: (row) => ({
                  className: `${styles.num} ${row.delta !== null && row.delta > 0 ? styles.better : ""} ${row.delta !== null && row.delta < 0 ? styles.worse : ""}`,
                }),
                cell: (row) => (row.delta === null ? (row.differs ? "error" : "–") : row.delta > 0 ? `+${fmt(row.delta)}` : fmt(row.delta)),
              },
            ]}
          />
        </>
      ) : null}
    </Card>
  );
}
