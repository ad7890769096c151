import { useState } from "react";
import { Link } from "react-router";

import { Table, type Column } from "../../../components/Table";
import ui from "../../../components/ui.module.css";
import styles from "../sweeps.module.css";
import { bestFirst, formatMetric, formatParam, sortTrials, type TrialSort } from "../lib/trials";
import type { Direction, Param, Trial } from "../lib/types";
import { TrialStatePill } from "./SweepStatus";

type TrialsTableProps = {
  slug: string;
  trials: readonly Trial[];
  space: readonly Param[];
  metricLabel: string;
  direction: Direction;
  bestNumber: number | null;
};

/** A parameter's value in a cell: an input's item by id ("#7"), the rest as numbers or text. */
export function paramCell(param: Param, trial: Trial): string {
  const value = trial.params[param.name];
  return param.type === "input" && value !== null && value !== undefined ? `#${String(value)}` : formatParam(value);
}

/** Every trial: its parameters, state, metric and steps, a link to its run; sorted best first, re-sortable from the headers. */
export function TrialsTable({ slug, trials, space, metricLabel, direction, bestNumber }: TrialsTableProps) {
  const [sort, setSort] = useState<TrialSort>(() => bestFirst(direction));
  const onSort = (key: string) => {
    const next = key as TrialSort["key"];
    // A new column starts in its useful order: the best value, the most steps, the first trial.
    if (next !== sort.key) setSort(next === "value" ? bestFirst(direction) : { key: next, descending: next === "steps" });
    else setSort({ key: next, descending: !sort.descending });
  };
  const columns: Column<Trial>[] = [
    { key: "number", header: "#", sortKey: "number", cell: (t) => t.number, cellProps: () => ({ className: styles.numeric }) },
    { key: "run", header: "Run", cell: (t) => (t.run ? <Link to={`/p/${slug}/runs/${t.run.id}`}>{t.run.name}</Link> : <span className={ui.muted}>no run</span>), cellProps: () => ({ className: styles.nowrap }) },
    {
      key: "state",
      header: "State",
      cell: (t) => (
        <span className={`${ui.row} ${styles.nowrap}`} style={{ flexWrap: "nowrap" }} title={t.stop_reason || undefined}>
          <TrialStatePill state={t.state} />
          {t.state === "pruned" && t.stopped_at_step !== null ? <span className={ui.muted}>at step {t.stopped_at_step}</span> : null}
        </span>
      ),
    },
    {
      key: "value",
      header: `${metricLabel} (${direction === "maximize" ? "higher" : "lower"} is better)`,
      sortKey: "value",
      cell: (t) => (
        <span>
          {formatMetric(t.value)}
          {t.number === bestNumber ? <span className={`${ui.pill} ${ui.ok ?? ""}`} style={{ marginLeft: 6 }}>best</span> : null}
        </span>
      ),
      cellProps: () => ({ className: styles.numeric }),
    },
    { key: "steps", header: "Steps", sortKey: "steps", cell: (t) => t.steps, cellProps: () => ({ className: styles.numeric }) },
    ...space.map<Column<Trial>>((param) => ({ key: `param:${param.name}`, header: <span className={ui.mono}>{param.name}</span>, cell: (t) => paramCell(param, t), cellProps: () => ({ className: styles.paramCell }) })),
  ];
  return (
    <Table<Trial>
      label="Trials"
      testId="trials-table"
      rows={sortTrials(trials, sort)}
      rowKey={(t) => t.number}
      columns={columns}
      sort={sort}
      onSort={onSort}
      isSelected={(t) => t.number === bestNumber}
      maxHeight={520}
    />
  );
}
