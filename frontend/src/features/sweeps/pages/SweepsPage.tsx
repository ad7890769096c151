import { Link } from "react-router";

import { ButtonLink } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { SweepIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import { useProjectSlug } from "../../projects/hooks";
import { SweepStatusPill } from "../components/SweepStatus";
import { useSweeps } from "../hooks";
import { countsLine, formatMetric } from "../lib/trials";
import type { SweepSummary } from "../lib/types";
import styles from "../sweeps.module.css";

/** `/p/:slug/sweeps`: the project's sweeps, newest first. */
export function SweepsPage() {
  const slug = useProjectSlug();
  const sweeps = useSweeps(slug);
  const list = sweeps.data?.results ?? [];
  return (
    <>
      <PageHeader
        title="Sweeps"
        description="Searches over a run's config and inputs: each trial is a run, scored by one metric."
        actions={
          <ButtonLink to={`/p/${slug}/sweeps/new`} variant="primary">
            New sweep
          </ButtonLink>
        }
      />
      {sweeps.isPending ? <Loading what="sweeps" /> : null}
      {sweeps.isError ? <ErrorState title="Could not load the sweeps" error={sweeps.error} onRetry={() => void sweeps.refetch()} /> : null}
      {sweeps.data && list.length === 0 ? (
        <EmptyState
          icon={<SweepIcon size={26} />}
          title="No sweeps yet"
          action={
            <span className={ui.row}>
              <ButtonLink to={`/p/${slug}/runs`} variant="primary">
                Pick a run to sweep from
              </ButtonLink>
              <ButtonLink to={`/p/${slug}/sweeps/new`}>Start from a preset</ButtonLink>
            </span>
          }
        >
          A sweep tries a run with other learning rates, rollout sizes, rewards or data, and finds which does best. Open a run you like and press “Sweep from this run”.
        </EmptyState>
      ) : null}
      {list.length ? (
        <Table<SweepSummary>
          label="Sweeps"
          testId="sweeps-table"
          rows={list}
          rowKey={(s) => s.id}
          columns={[
            { key: "name", header: "Name", cell: (s) => <Link to={`/p/${slug}/sweeps/${s.id}`}>{s.name}</Link> },
            { key: "method", header: "Method", cell: (s) => s.method },
            { key: "status", header: "Status", cell: (s) => <SweepStatusPill status={s.status} /> },
            { key: "trials", header: "Trials", cell: (s) => <span title={`up to ${s.max_trials}`}>{countsLine(s.trial_counts)}</span> },
            {
              key: "best",
              header: "Best",
              cell: (s) =>
                s.best ? (
                  <span>
                    {formatMetric(s.best.value)} <Link to={`/p/${slug}/runs/${s.best.run}`}>trial #{s.best.number}</Link>
                  </span>
                ) : (
                  "—"
                ),
              cellProps: () => ({ className: styles.numeric }),
            },
            { key: "metric", header: "Metric", cell: (s) => `${s.direction === "maximize" ? "max" : "min"} ${s.metric_label}` },
            { key: "created", header: "Created", cell: (s) => <Time value={s.created_at} format="age" /> },
          ]}
        />
      ) : null}
    </>
  );
}
