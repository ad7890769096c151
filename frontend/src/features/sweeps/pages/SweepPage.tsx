import { useEffect } from "react";
import { Link, useParams } from "react-router";

import { ErrorState } from "../../../components/ErrorState";
import { Facts } from "../../../components/Facts";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import ui from "../../../components/ui.module.css";
import { loadPlotly } from "../../../lib/plotly";
import { useProjectSlug } from "../../projects/hooks";
import { BestTrial } from "../components/BestTrial";
import { Importance } from "../components/Importance";
import { ParallelCoordinates } from "../components/ParallelCoordinates";
import { StepsChart } from "../components/StepsChart";
import { SweepActions } from "../components/SweepActions";
import { SweepStatusPill } from "../components/SweepStatus";
import { TrialsTable } from "../components/TrialsTable";
import { useSweep } from "../hooks";
import { describeParam } from "../lib/space";
import { countsLine, isLive } from "../lib/trials";
import type { SweepDetail } from "../lib/types";
import styles from "../sweeps.module.css";

/** `/p/:slug/sweeps/:sweepId`: a sweep's trials and what they found, live while it runs. */
export function SweepPage() {
  const slug = useProjectSlug();
  const id = Number(useParams().sweepId);
  const sweep = useSweep(id);
  useEffect(() => void loadPlotly(), []); // beside the sweep's request, not after it (the steps chart)
  if (sweep.isPending) return <Loading what="the sweep" />;
  if (sweep.isError) return <ErrorState title={`Could not load sweep #${id}`} error={sweep.error} onRetry={() => void sweep.refetch()} back={{ to: `/p/${slug}/sweeps`, label: "All sweeps" }} />;
  return <SweepView sweep={sweep.data} slug={slug} />;
}

function SweepView({ sweep, slug }: { sweep: SweepDetail; slug: string }) {
  const { trial_counts: counts } = sweep;
  const bestNumber = sweep.best_trial?.number ?? null;
  const pruner = sweep.pruner.kind === "none" ? "none" : `${sweep.pruner.kind}, from step ${sweep.pruner.min_steps}`;
  return (
    <>
      <PageHeader
        title={sweep.name}
        description={
          <span className={ui.row}>
            <SweepStatusPill status={sweep.status} />
            {isLive(sweep) ? <span className={`${ui.pill} ${ui.live ?? ""}`}>live</span> : null}
            <span>#{sweep.id}</span>
            <span>{sweep.method}</span>
            <span>
              {sweep.direction} {sweep.metric_label}
            </span>
            {sweep.base_run ? (
              <Link to={`/p/${slug}/runs/${sweep.base_run.id}`}>from run {sweep.base_run.name}</Link>
            ) : (
              <span>from preset {sweep.preset}</span>
            )}
          </span>
        }
        actions={<SweepActions sweep={sweep} slug={slug} />}
      />
      {sweep.status_reason ? <p className={ui.muted}>{sweep.status_reason}</p> : null}
      <div className={styles.facts}>
        <Facts
          label="Sweep summary"
          tileWidth={150}
          facts={[
            { label: "Trials", value: `${sweep.trials.length} of ${sweep.max_trials}${sweep.grid_size !== null ? ` (grid of ${sweep.grid_size})` : ""}`, testId: "trial-total" },
            { label: "By state", value: countsLine(counts) },
            { label: "At a time", value: sweep.parallelism },
            { label: "Pruner", value: pruner },
            { label: "Method", value: `${sweep.method}, seed ${sweep.seed}` },
          ]}
        />
        <dl className={ui.extraInfo} style={{ marginTop: 8 }} aria-label="Search space">
          {sweep.space.map((p) => (
            <div key={p.name}>
              <dt className={ui.mono}>{p.name}</dt>
              <dd>{describeParam(p)}</dd>
            </div>
          ))}
        </dl>
      </div>
      <div className={styles.grid}>
        <BestTrial sweep={sweep} slug={slug} />
        <Importance importance={sweep.importance} complete={counts.complete} />
      </div>
      {sweep.trials.length === 0 ? (
        <p className={styles.card}>No trial has started yet: the first {Math.min(sweep.parallelism, sweep.max_trials)} start as the queue lets them.</p>
      ) : (
        <>
          <ParallelCoordinates space={sweep.space} trials={sweep.trials} metricLabel={sweep.metric_label} direction={sweep.direction} bestNumber={bestNumber} />
          <section aria-label="Trials" style={{ marginBottom: 16 }}>
            <h2 className={styles.cardTitle}>Trials</h2>
            <TrialsTable slug={slug} trials={sweep.trials} space={sweep.space} metricLabel={sweep.metric_label} direction={sweep.direction} bestNumber={bestNumber} />
          </section>
          <StepsChart trials={sweep.trials} metricLabel={sweep.metric_label} bestNumber={bestNumber} />
        </>
      )}
    </>
  );
}
