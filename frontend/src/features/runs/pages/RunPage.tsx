import { useCallback, useEffect, useRef, useState } from "react";
import { Link, useLocation, useNavigate, useParams, useSearchParams } from "react-router";

import { Button, ButtonAnchor, ButtonLink } from "../../../components/Button";
import { ConfirmDialog } from "../../../components/ConfirmDialog";
import { ErrorState } from "../../../components/ErrorState";
import { inputClass } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Tabs } from "../../../components/Tabs";
import ui from "../../../components/ui.module.css";
import { formatDuration } from "../../../lib/time";
import { loadPlotly } from "../../../lib/plotly";
import { useNow } from "../../../lib/useNow";
import { evaluationReportUrl } from "../../evaluations/api";
import { EvaluateCheckpointsButton } from "../../evaluations/components/EvaluateCheckpointsButton";
import { useMetricKeys } from "../../metrics/hooks";
import { useProjectSlug } from "../../projects/hooks";
import { useRewardVersion } from "../../rewards/hooks";
import { ExplorerPage } from "../../rollouts/pages/ExplorerPage";
import { ACTIVE_STATUSES, reportUrl, type LogLine, type RunDetail } from "../api";
import { ChartGrid, type LiveMetrics } from "../components/ChartGrid";
import { RunInputs } from "../components/RunInputs";
import { AlertsPanel, CheckpointsPanel, ConfigPanel, LogsPanel, TimelinePanel } from "../components/RunPanels";
import { RewardErrors } from "../components/RewardErrors";
import { RewardErrorBadge, RunStatusPill } from "../components/RunStatus";
import { RunStorageActions } from "../components/RunStorageActions";
import { StartupTimeline } from "../components/StartupTimeline";
import { RunTraceback } from "../components/RunTraceback";
import { useLiveRun, useRun, useRunAction } from "../hooks";
import type { RunTab } from "../lib/searchParams";
import { useRunPageData } from "../loaders";

const TABS: { key: RunTab; label: string }[] = [
  { key: "charts", label: "Charts" },
  { key: "samples", label: "Samples" },
  { key: "logs", label: "Logs" },
  { key: "checkpoints", label: "Checkpoints" },
  { key: "alerts", label: "Alerts" },
  { key: "config", label: "Config" },
  { key: "timeline", label: "Timeline" },
];
const LIVE_LOG_LINES = 2000;

export function RunPage() {
  const slug = useProjectSlug();
  const runId = Number(useParams().runId);
  const run = useRun(runId);
  // Asked for beside the run, not after it: the charts need both, and plotly.
  useMetricKeys(runId);
  useEffect(() => void loadPlotly(), []);
  if (run.isPending) return <Loading what="the run" />;
  if (run.isError) return <ErrorState title={`Could not load run #${runId}`} error={run.error} onRetry={() => void run.refetch()} back={{ to: `/p/${slug}/runs`, label: "All runs" }} />;
  return <RunView run={run.data} slug={slug} />;
}

function RunView({ run, slug }: { run: RunDetail; slug: string }) {
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  // The Samples tab has a path of its own (/runs/<id>/samples): the explorer's filters are
  // its query string, apart from the charts' (`from`, `to`, `charts`, ...).
  const onSamples = useLocation().pathname.endsWith("/samples");
  const checkedTab = useRunPageData().tab;
  const tab: RunTab = onSamples ? "samples" : checkedTab;
  const reward = run.inputs.reward;
  const rewardCode = useRewardVersion(reward.function, reward.number).data?.code;
  const failure = run.status === "failed" && run.last_error ? run.last_error : null;
  const keys = useMetricKeys(run.id);
  const [liveLogs, setLiveLogs] = useState<LogLine[]>([]);
  const appendLive = useRef<((record: LiveMetrics) => void) | null>(null);
  const bindLive = useCallback((fn: ((record: LiveMetrics) => void) | null) => {
    appendLive.current = fn;
  }, []);
  const known = new Set(keys.data ?? []);

  // The Timeline tab's waterfall waits for the first metric's mark (the Charts tab's gives
  // way to the charts): only there is the run asked for again when that metric arrives.
  const latest = run.attempts.at(-1);
  const startupPending = tab === "timeline" && ACTIVE_STATUSES.includes(run.status) && (latest === undefined || latest.startup?.total_s === null);
  useLiveRun({ ...run, startupPending }, known, {
    metrics: (record) => appendLive.current?.({ run: run.id, step: record.step, time: record.time, values: record.values }),
    log: (line) => setLiveLogs((lines) => [...lines.slice(-LIVE_LOG_LINES), line]),
  });

  return (
    <>
      <PageHeader
        title={run.name}
        description={
          <span className={ui.row}>
            <RunStatusPill status={run.status} />
            <RewardErrorBadge rate={run.reward_error_rate} />
            {run.archived_at ? <span className={ui.pill}>archived</span> : null}
            <span>#{run.id}</span>
            {run.preset ? <span>preset {run.preset}</span> : null}
            <span>
              {run.attempts.length} attempt{run.attempts.length === 1 ? "" : "s"}
            </span>
            <RunDuration run={run} />
            {run.queue_position ? <span>#{run.queue_position} in the queue{run.waiting_for ? `, waiting for ${run.waiting_for}` : ""}</span> : null}
            {run.parent ? <Link to={`/p/${slug}/runs/${run.parent}`}>clone of #{run.parent}</Link> : null}
            {run.sweep ? (
              <Link to={`/p/${slug}/sweeps/${run.sweep.id}`}>
                trial {run.sweep.trial} of sweep “{run.sweep.name}”
              </Link>
            ) : null}
          </span>
        }
        actions={<RunActions run={run} slug={slug} />}
      />
      <RunInputs inputs={run.inputs} slug={slug} label="Run inputs" inline />
      {run.status_reason ? <p className={ui.muted}>{run.status_reason}</p> : null}
      {/* The failure in short (the full traceback is one click away, and in the Logs tab). */}
      {failure && tab !== "logs" ? <RunTraceback text={failure} code={rewardCode} collapsed /> : null}
      <Tabs
        label="Run sections"
        tabs={TABS}
        current={tab}
        onChange={(key) => {
          const page = `/p/${slug}/runs/${run.id}`;
          // The explorer opens on every step, newest first, and follows new ones while the run trains.
          if (key === "samples") return void navigate(`${page}/samples?follow=1`);
          if (onSamples) return void navigate(key === "charts" ? page : `${page}?tab=${key}`);
          const next = new URLSearchParams(params);
          if (key === "charts") next.delete("tab");
          else next.set("tab", key);
          setParams(next, { replace: true });
        }}
      />
      <div role="tabpanel" aria-label={TABS.find((t) => t.key === tab)?.label}>
        {tab === "charts" ? (
          keys.isPending ? (
            <Loading what="metric keys" />
          ) : keys.isError ? (
            <ErrorState title="Could not load the metric keys" error={keys.error} onRetry={() => void keys.refetch()} />
          ) : (
            <>
              <ChartGrid
                key={run.id} // another run: its own charts, store and live points
                runs={[run.id]}
                keys={keys.data}
                runLabel={() => run.name}
                bindLive={bindLive}
                headline
                onPointClick={(_, step) => void navigate(`/p/${slug}/runs/${run.id}/rollouts?step=${step}`)}
                emptyHint={
                  ACTIVE_STATUSES.includes(run.status)
                    ? "Charts appear here, live, as soon as the trainer reports its first step."
                    : "This run reported no metrics."
                }
              />
              {/* Until the first chart: where the run's start stands, phase by phase. */}
              {keys.data.length === 0 ? <StartupTimeline run={run} /> : null}
            </>
          )
        ) : null}
        {tab === "samples" ? <ExplorerPage embedded /> : null}
        {tab === "logs" ? (
          <>
            <RewardErrors run={run.id} slug={slug} rate={run.reward_error_rate} code={rewardCode} />
            {/* The reward errors above show the failing line once; the log need not again. */}
            <LogsPanel run={run.id} live={liveLogs} active={ACTIVE_STATUSES.includes(run.status)} failure={failure} rewardCode={(run.reward_error_rate ?? 0) > 0 ? undefined : rewardCode} />
          </>
        ) : null}
        {tab === "checkpoints" ? <CheckpointsPanel run={run.id} slug={slug} /> : null}
        {tab === "alerts" ? <AlertsPanel run={run.id} slug={slug} /> : null}
        {tab === "config" ? <ConfigPanel run={run} slug={slug} /> : null}
        {tab === "timeline" ? <TimelinePanel run={run} /> : null}
      </div>
    </>
  );
}

/** "ran 42 s": counts up every second while the run is live. */
function RunDuration({ run }: { run: RunDetail }) {
  const now = useNow(run.started_at !== null && run.finished_at === null && ACTIVE_STATUSES.includes(run.status));
  return <span data-testid="run-duration">ran {formatDuration(run.started_at, run.finished_at, now)}</span>;
}

function RunActions({ run, slug }: { run: RunDetail; slug: string }) {
  const actions = useRunAction(run.id);
  const [priority, setPriority] = useState(String(run.priority));
  const [confirming, setConfirming] = useState(false);
  const active = ACTIVE_STATUSES.includes(run.status);
  const evaluation = run.kind === "evaluation";
  // A provenance record (an older run whose files are gone) is shown, never resumed or cloned (the API answers 400).
  const relaunchable = !evaluation && !run.inputs.provenance;
  return (
    <div className={ui.row}>
      <ButtonLink to={`/p/${slug}/runs/${run.id}/samples?follow=1`}>Samples</ButtonLink>
      <EvaluateCheckpointsButton run={run} slug={slug} />
      {active && run.status !== "cancelling" ? (
        <Button onClick={() => setConfirming(true)} disabled={actions.cancel.isPending}>
          {evaluation ? "Cancel evaluation" : "Cancel run"}
        </Button>
      ) : null}
      <ConfirmDialog
        open={confirming}
        title={`Cancel ${evaluation ? "evaluation" : "run"} #${run.id}?`}
        confirmLabel={evaluation ? "Cancel evaluation" : "Cancel run"}
        cancelLabel="Keep running"
        danger
        busy={actions.cancel.isPending}
        onCancel={() => setConfirming(false)}
        onConfirm={() => {
          setConfirming(false);
          actions.cancel.mutate();
        }}
      >
        {run.status === "queued"
          ? `“${run.name}” leaves the queue and never starts.`
          : evaluation
            ? `“${run.name}” stops; the responses scored so far stay in its results. An evaluation is not resumed: start a new one to answer the rest.`
            : `The trainer of “${run.name}” stops; its checkpoints stay, and Resume continues from the latest one.`}
      </ConfirmDialog>
      {/* An evaluation is neither resumed nor cloned (the API answers 409): a new one is made. */}
      {relaunchable && (run.status === "failed" || run.status === "cancelled") ? (
        <Button onClick={() => actions.resume.mutate()} disabled={actions.resume.isPending}>
          Resume
        </Button>
      ) : null}
      {relaunchable ? <ButtonLink to={`/p/${slug}/runs/new?clone=${run.id}`}>Clone with edits</ButtonLink> : null}
      {relaunchable ? <ButtonLink to={`/p/${slug}/sweeps/new?from_run=${run.id}`}>Sweep from this run</ButtonLink> : null}
      <ButtonAnchor href={evaluation ? evaluationReportUrl(run.id) : reportUrl([run.id])} download>
        Download report
      </ButtonAnchor>
      {run.status === "queued" ? (
        <form
          className={ui.row}
          onSubmit={(e) => {
            e.preventDefault();
            actions.priority.mutate(Number(priority));
          }}
        >
          <input className={inputClass} style={{ width: 80 }} type="number" min={-1000} max={1000} value={priority} onChange={(e) => setPriority(e.target.value)} aria-label="Priority" />
          <Button type="submit">Set priority</Button>
        </form>
      ) : null}
      <RunStorageActions run={run} slug={slug} />
    </div>
  );
}
