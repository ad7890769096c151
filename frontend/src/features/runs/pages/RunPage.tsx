import { useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router";

import { Button, ButtonAnchor, ButtonLink } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { inputClass } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Tabs } from "../../../components/Tabs";
import ui from "../../../components/ui.module.css";
import { loadPlotly } from "../../../lib/plotly";
import { useEventStream } from "../../../lib/useEventStream";
import { useProjectSlug } from "../../projects/hooks";
import { ACTIVE_STATUSES, reportUrl, runKeys, type LogLine, type RunDetail } from "../api";
import { ChartGrid, type LiveMetrics } from "../components/ChartGrid";
import { AlertsPanel, CheckpointsPanel, ConfigPanel, LogsPanel, TimelinePanel } from "../components/RunPanels";
import { RunInputs } from "../components/RunInputs";
import { formatDuration, RunStatusPill } from "../components/RunStatus";
import { useMetricKeys, useRun, useRunAction } from "../hooks";

type Tab = "charts" | "logs" | "checkpoints" | "alerts" | "config" | "timeline";
const TABS: { key: Tab; label: string }[] = [
  { key: "charts", label: "Charts" },
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
  if (run.isError) return <ErrorState title={`Could not load run #${runId}`} error={run.error} onRetry={() => void run.refetch()} />;
  return <RunView run={run.data} slug={slug} />;
}

function RunView({ run, slug }: { run: RunDetail; slug: string }) {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const tab = (TABS.find((t) => t.key === params.get("tab"))?.key ?? "charts") as Tab;
  const keys = useMetricKeys(run.id);
  const [liveLogs, setLiveLogs] = useState<LogLine[]>([]);
  const appendLive = useRef<((record: LiveMetrics) => void) | null>(null);
  const bindLive = useCallback((fn: ((record: LiveMetrics) => void) | null) => {
    appendLive.current = fn;
  }, []);
  const known = new Set(keys.data ?? []);

  useEventStream(`/api/runs/${run.id}/events`, {
    metrics: (data) => {
      // The event carries its record's `time` (the trainer's clock): the same clock the
      // metrics API's `times` are read from, so live points line up on the time axis.
      const record = data as { step: number; time: number; values: Record<string, number | null> };
      if (Object.keys(record.values).some((k) => !known.has(k))) {
        void queryClient.invalidateQueries({ queryKey: runKeys.metricKeys(run.id) });
      }
      appendLive.current?.({ run: run.id, step: record.step, time: record.time, values: record.values });
    },
    log: (data) => setLiveLogs((lines) => [...lines.slice(-LIVE_LOG_LINES), data as LogLine]),
    checkpoint: () => void queryClient.invalidateQueries({ queryKey: runKeys.checkpoints(run.id) }),
    alert: () => void queryClient.invalidateQueries({ queryKey: runKeys.alerts(run.id) }),
    "run-status": (data) => {
      const status = (data as { status: string }).status;
      if (status !== run.status) void queryClient.invalidateQueries({ queryKey: runKeys.detail(run.id) });
    },
  });

  return (
    <>
      <PageHeader
        title={run.name}
        description={
          <span className={ui.row}>
            <RunStatusPill status={run.status} />
            <span>#{run.id}</span>
            {run.preset ? <span>preset {run.preset}</span> : null}
            <span>
              {run.attempts.length} attempt{run.attempts.length === 1 ? "" : "s"}
            </span>
            <span>ran {formatDuration(run.started_at, run.finished_at)}</span>
            {run.queue_position ? <span>#{run.queue_position} in the queue{run.waiting_for ? `, waiting for ${run.waiting_for}` : ""}</span> : null}
            {run.parent ? <Link to={`/p/${slug}/runs/${run.parent}`}>clone of #{run.parent}</Link> : null}
          </span>
        }
        actions={<RunActions run={run} slug={slug} />}
      />
      <RunInputs inputs={run.inputs} slug={slug} label="Run inputs" inline />
      {run.status_reason ? <p className={ui.muted}>{run.status_reason}</p> : null}
      {run.status === "failed" && run.last_error ? (
        <pre className={ui.mono} style={{ whiteSpace: "pre-wrap", color: "var(--error-fg)" }}>
          {run.last_error}
        </pre>
      ) : null}
      <Tabs
        label="Run sections"
        tabs={TABS}
        current={tab}
        onChange={(key) => {
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
            <ChartGrid
              key={run.id} // another run: its own charts, store and live points
              runs={[run.id]}
              keys={keys.data}
              runLabel={() => run.name}
              bindLive={bindLive}
              onPointClick={(_, step) => void navigate(`/p/${slug}/runs/${run.id}/rollouts?step=${step}`)}
              emptyHint={
                ACTIVE_STATUSES.includes(run.status)
                  ? "Charts appear here, live, as soon as the trainer reports its first step."
                  : "This run reported no metrics."
              }
            />
          )
        ) : null}
        {tab === "logs" ? <LogsPanel run={run.id} live={liveLogs} active={ACTIVE_STATUSES.includes(run.status)} /> : null}
        {tab === "checkpoints" ? <CheckpointsPanel run={run.id} /> : null}
        {tab === "alerts" ? <AlertsPanel run={run.id} slug={slug} /> : null}
        {tab === "config" ? <ConfigPanel run={run} slug={slug} /> : null}
        {tab === "timeline" ? <TimelinePanel run={run} /> : null}
      </div>
    </>
  );
}

function RunActions({ run, slug }: { run: RunDetail; slug: string }) {
  const actions = useRunAction(run.id);
  const [priority, setPriority] = useState(String(run.priority));
  const active = ACTIVE_STATUSES.includes(run.status);
  return (
    <div className={ui.row}>
      {active && run.status !== "cancelling" ? (
        <Button onClick={() => actions.cancel.mutate()} disabled={actions.cancel.isPending}>
          Cancel run
        </Button>
      ) : null}
      {run.status === "failed" || run.status === "cancelled" ? (
        <Button onClick={() => actions.resume.mutate()} disabled={actions.resume.isPending}>
          Resume
        </Button>
      ) : null}
      <ButtonLink to={`/p/${slug}/runs/new?clone=${run.id}`}>Clone with edits</ButtonLink>
      <ButtonAnchor href={reportUrl([run.id])} download>
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
    </div>
  );
}
