import { useLayoutEffect, useRef, useState } from "react";
import { Link } from "react-router";

import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { inputClass } from "../../../components/Field";
import { AlertIcon, CheckCircleIcon, StatusIcon } from "../../../components/icons";
import { QueryList } from "../../../components/QueryList";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import { formatBytes } from "../../../lib/units";
import { evidenceSearch } from "../../rollouts/lib/alertLink";
import type { LogLine, RunDetail } from "../api";
import { useAlerts, useCheckpoints, useConfigSchema, useLogs, usePresets, useRun } from "../hooks";
import { differingPaths, formatValue } from "../lib/configDiff";
import { atPathField, pathFieldsOf } from "../lib/configSchema";
import { lastUserLine } from "../lib/traceback";
import { RunInputs } from "./RunInputs";
import { RunStatusPill } from "./RunStatus";
import { StartupTimeline } from "./StartupTimeline";
import { RewardSource, RunTraceback, TracebackLines } from "./RunTraceback";

const LEVELS = ["", "debug", "info", "warning", "error"];

type LogsPanelProps = {
  run: number;
  live: LogLine[];
  active: boolean;
  /** A failed run's `last_error`: shown after the lines unless the trainer logged it. */
  failure?: string | null;
  /** The run's reward code: the line a traceback points at is shown from it. */
  rewardCode?: string;
};

/**
 * The logs tail: stored lines, then live ones from the run's stream (`live`). Lines of a
 * traceback that point at the user's reward code are marked, and that line of the code is
 * shown above the log.
 */
export function LogsPanel({ run, live, active, failure = null, rewardCode }: LogsPanelProps) {
  const [level, setLevel] = useState("");
  const logs = useLogs(run, level);
  const seen = new Set((logs.data ?? []).map((l) => `${l.attempt}:${l.seq}`));
  const lines = [...(logs.data ?? []), ...live.filter((l) => !seen.has(`${l.attempt}:${l.seq}`) && (!level || l.level === level))];
  // A run that failed before its trainer could log (a launch or Ray failure) has only its
  // `last_error`: it is the log's last word then.
  const unlogged = failure !== null && logs.data !== undefined && !lines.some((l) => l.message.trim() === failure.trim());
  const userLine = lastUserLine([...lines.map((l) => l.message), failure ?? ""].join("\n"));
  // A tail: the newest lines (and a failure's last words) are in view, as in a terminal.
  const tail = useRef<HTMLPreElement>(null);
  useLayoutEffect(() => {
    if (tail.current) tail.current.scrollTop = tail.current.scrollHeight;
  }, [lines.length]);
  return (
    <section aria-label="Logs">
      <label className={ui.row} style={{ marginBottom: 8 }}>
        Level
        <select className={inputClass} value={level} onChange={(e) => setLevel(e.target.value)} aria-label="Log level">
          {LEVELS.map((l) => (
            <option key={l} value={l}>
              {l || "all"}
            </option>
          ))}
        </select>
      </label>
      {logs.isPending ? <Loading what="logs" /> : null}
      {logs.isError ? <ErrorState title="Could not load the logs" error={logs.error} onRetry={() => void logs.refetch()} /> : null}
      {logs.data && lines.length === 0 && !unlogged ? (
        <EmptyState icon={<StatusIcon size={26} />} title={active ? "No log lines yet" : "No log lines"}>
          {active
            ? "The trainer's log lines (warnings, resumes, checkpoints) appear here, live, as it writes them."
            : `This run wrote no log lines${level ? ` at level ${level}` : ""}: the trainer logs warnings, resumes and checkpoints, not every step (those are the charts).`}
        </EmptyState>
      ) : null}
      {userLine !== null && rewardCode !== undefined ? <RewardSource code={rewardCode} line={userLine} /> : null}
      {lines.length ? (
        <pre ref={tail} className={ui.mono} style={{ maxHeight: 480, overflow: "auto", background: "var(--color-surface)", border: "1px solid var(--color-border)", borderRadius: 8, padding: 12, whiteSpace: "pre-wrap" }} data-testid="log-lines">
          {lines.map((l, i) => (
            <span key={`${l.attempt}:${l.seq}`} data-level={l.level}>
              {`[${l.attempt}] ${l.level.toUpperCase().padEnd(7)} `}
              <TracebackLines text={l.message} />
              {i < lines.length - 1 ? "\n" : null}
            </span>
          ))}
        </pre>
      ) : null}
      {unlogged ? <RunTraceback text={failure} label="The run's last error" /> : null}
    </section>
  );
}

export function CheckpointsPanel({ run, slug }: { run: number; slug: string }) {
  const checkpoints = useCheckpoints(run);
  return (
    <QueryList
      query={checkpoints}
      what="checkpoints"
      failed="Could not load the checkpoints"
      empty={
        <EmptyState icon={<CheckCircleIcon size={26} />} title="No checkpoints yet">
          The trainer saves one every <code>checkpoint.save_every</code> steps and at the end of the run.
        </EmptyState>
      }
    >
      {(rows) => (
        <Table
          label="Checkpoints"
          rows={rows}
          rowKey={(c) => c.id}
          columns={[
            { key: "step", header: "Step", cell: (c) => c.step },
            { key: "attempt", header: "Attempt", cell: (c) => c.attempt },
            { key: "size", header: "Size", cell: (c) => formatBytes(c.size_bytes) },
            { key: "uri", header: "Path", cell: (c) => <code className={ui.mono}>{c.uri}</code> },
            {
              key: "download",
              header: "",
              cell: (c) =>
                c.reachable && c.download_url ? (
                  <span className={ui.row}>
                    <Link to={`/p/${slug}/playground?model=checkpoint:${c.id}`}>Chat with this checkpoint</Link>
                    <a href={c.download_url} download>
                      Download .tar
                    </a>
                  </span>
                ) : (
                  <span className={ui.muted} title={c.unreachable_reason}>
                    Not reachable: {c.unreachable_reason}
                  </span>
                ),
            },
          ]}
        />
      )}
    </QueryList>
  );
}

export function AlertsPanel({ run, slug }: { run: number; slug: string }) {
  const alerts = useAlerts(run);
  return (
    <QueryList
      query={alerts}
      what="alerts"
      failed="Could not load the alerts"
      empty={
        <EmptyState icon={<AlertIcon size={26} />} title="No reward-hacking alerts">
          The studio watches the reward, response lengths and KL while the run trains; anything suspicious shows up here, live.
        </EmptyState>
      }
    >
      {(rows) => (
        <Table
          label="Alerts"
          rows={rows}
          rowKey={(a) => a.id}
          columns={[
            { key: "step", header: "Step", cell: (a) => <Link to={`/p/${slug}/runs/${run}/rollouts?${evidenceSearch(a)}`}>{a.step}</Link> },
            { key: "kind", header: "Rule", cell: (a) => <span className={`${ui.pill} ${a.severity === "critical" ? ui.error : ui.warn}`}>{a.kind}</span> },
            { key: "message", header: "What happened", cell: (a) => a.message },
            {
              key: "evidence",
              header: "Evidence",
              cell: (a) => (
                <span className={ui.row}>
                  <Link to={`/p/${slug}/runs/${run}/rollouts?${evidenceSearch(a)}`}>samples</Link>
                  {a.evidence.metric_keys.length ? (
                    <Link
                      to={`/p/${slug}/runs/${run}?charts=${encodeURIComponent(a.evidence.metric_keys.join(","))}&from=${a.evidence.step_min}&to=${a.evidence.step_max}`}
                    >
                      charts
                    </Link>
                  ) : null}
                </span>
              ),
            },
          ]}
        />
      )}
    </QueryList>
  );
}

export function TimelinePanel({ run }: { run: RunDetail }) {
  const history = run.status_history ?? [];
  return (
    <section aria-label="Status timeline">
      <StartupTimeline run={run} />
      <h3 style={{ fontSize: "0.95rem", marginBottom: 8 }}>Status changes</h3>
      <ol style={{ listStyle: "none", padding: 0, margin: 0, display: "grid", gap: 8 }}>
        {history.map((change, i) => (
          <li key={i} className={ui.row}>
            <span className={ui.muted} style={{ minWidth: 170 }}>
              <Time value={change.at} />
            </span>
            <RunStatusPill status={change.to_status} />
            <span>{change.reason}</span>
            <span className={ui.muted}>{change.actor}</span>
          </li>
        ))}
      </ol>
      {run.attempts.length ? (
        <div style={{ marginTop: 16 }}>
          <Table
            label="Attempts"
            rows={run.attempts}
            rowKey={(a) => a.number}
            columns={[
              { key: "n", header: "Attempt", cell: (a) => a.number },
              { key: "resume", header: "Resumed from step", cell: (a) => a.resume_from_step ?? "start" },
              { key: "ray", header: "Ray status", cell: (a) => a.ray_status ?? "" },
              { key: "exit", header: "Exit", cell: (a) => a.exit_message ?? "" },
            ]}
          />
        </div>
      ) : null}
    </section>
  );
}

/** The config's differences without its path fields: those are the runs' inputs, shown apart. */
export function useConfigDiff(configs: (unknown | undefined)[]) {
  const schema = useConfigSchema();
  const pathFields = schema.data ? pathFieldsOf(schema.data) : [];
  const ready = schema.data !== undefined || schema.isError;
  if (!ready || configs.some((c) => c === undefined)) return null;
  return differingPaths(configs).filter((d) => !atPathField(d.path, pathFields));
}

/** The run's inputs, then its resolved config: only what differs from the parent run (or else the preset). */
export function ConfigPanel({ run, slug }: { run: RunDetail; slug: string }) {
  const parent = useRun(run.parent ?? 0, run.parent !== null);
  const presets = usePresets();
  const [showAll, setShowAll] = useState(false);
  const base = run.parent ? parent.data?.config : presets.data?.find((p) => p.name === run.preset)?.config;
  const baseName = run.parent ? `parent run #${run.parent}` : run.preset ? `preset ${run.preset}` : "the defaults";
  const diff = useConfigDiff([base, run.config]);
  return (
    <section aria-label="Config">
      <h3 style={{ fontSize: "0.95rem", marginBottom: 8 }}>Inputs</h3>
      <RunInputs inputs={run.inputs} slug={slug} />
      <h3 style={{ fontSize: "0.95rem", marginBottom: 8 }}>Config changed from {baseName}</h3>
      {diff === null ? <Loading what="the base config" /> : null}
      {diff && diff.length === 0 ? (
        <p className={ui.muted}>Nothing: the config is {baseName}&apos;s as is (the inputs above are chosen apart from it).</p>
      ) : null}
      {diff?.length ? (
        <Table
          label={`Config diff against ${baseName}`}
          rows={diff}
          rowKey={(d) => d.path}
          columns={[
            { key: "path", header: "Field", cell: (d) => <code className={ui.mono}>{d.path}</code> },
            { key: "base", header: baseName, cell: (d) => formatValue(d.values[0]) },
            { key: "run", header: "This run", cell: (d) => <strong>{formatValue(d.values[1])}</strong> },
          ]}
        />
      ) : null}
      <p className={ui.muted} style={{ marginTop: 8 }}>
        Fields naming files, folders or URLs are left out of this diff: they hold the inputs above, stored as references such as <code>resource:model/4</code>.
      </p>
      <div style={{ marginTop: 12 }}>
        <Button onClick={() => setShowAll((s) => !s)} aria-expanded={showAll}>
          {showAll ? "Hide" : "Show"} the full resolved config
        </Button>
        {showAll ? <pre className={ui.mono} style={{ whiteSpace: "pre-wrap" }}>{JSON.stringify(run.config, null, 2)}</pre> : null}
      </div>
    </section>
  );
}
