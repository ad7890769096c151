import { useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";

import { Button, ButtonLink } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { inputClass } from "../../../components/Field";
import { RunsIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import { formatDuration } from "../../../lib/time";
import { StorageMeter, StorageQuotaNotice } from "../../projects/components/StorageMeter";
import { useProjectSlug } from "../../projects/hooks";
import { ALL_STATUSES, type Run } from "../api";
import { QueueSummary } from "../components/QueueSummary";
import { inputsLine } from "../components/RunInputs";
import { RewardErrorBadge, RunStatusPill } from "../components/RunStatus";
import { Sparkline } from "../components/Sparkline";
import { useLiveRunLists, useRuns } from "../hooks";
import { MAX_COMPARED, runListFilters, type SortKey } from "../lib/searchParams";
import { useRunsPageData } from "../loaders";

/** The project's runs, live: a status change anywhere in the project refreshes the list. */
export function RunsPage() {
  const slug = useProjectSlug();
  const navigate = useNavigate();
  const [params, setParams] = useSearchParams();
  const { search: searched } = useRunsPageData();
  const { status, tag, q: search, sort: sortParam, archived } = searched;
  const descending = sortParam.startsWith("-");
  const sortKey = sortParam.replace(/^-/, "") as SortKey;
  const [selected, setSelected] = useState<number[]>([]);
  const runs = useRuns(slug, runListFilters(searched));
  useLiveRunLists(slug);

  function setParam(name: string, value: string) {
    const next = new URLSearchParams(params);
    if (value) next.set(name, value);
    else next.delete(name);
    setParams(next, { replace: true });
  }

  function toggle(id: number) {
    setSelected((all) => (all.includes(id) ? all.filter((x) => x !== id) : all.length < MAX_COMPARED ? [...all, id] : all));
  }

  const filtered = Boolean(status || tag || search || archived !== "false");
  const list = runs.data?.results ?? [];
  return (
    <>
      <PageHeader
        title="Runs"
        description="Training runs of this project: queued, running and finished. The list updates live."
        actions={
          <>
            <StorageMeter slug={slug} />
            <Button disabled={selected.length < 2} onClick={() => void navigate(`/p/${slug}/compare?runs=${selected.join(",")}`)}>
              Compare {selected.length ? `(${selected.length})` : ""}
            </Button>
            {/* One run ticked: a sweep of it; else the form starts from a preset. */}
            <ButtonLink to={`/p/${slug}/sweeps/new${selected.length === 1 ? `?from_run=${selected[0]}` : ""}`}>{selected.length === 1 ? "Sweep from this run" : "New sweep"}</ButtonLink>
            <ButtonLink to={`/p/${slug}/runs/new`} variant="primary">
              New run
            </ButtonLink>
          </>
        }
      />
      <div className={ui.row} style={{ marginBottom: 12 }} role="search" aria-label="Filter runs">
        <input className={inputClass} type="search" placeholder="Name contains…" aria-label="Name contains" defaultValue={search} onChange={(e) => setParam("q", e.target.value)} />
        <select className={inputClass} aria-label="Status" value={status} onChange={(e) => setParam("status", e.target.value)}>
          <option value="">Any status</option>
          {ALL_STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <input className={inputClass} placeholder="Tag" aria-label="Tag" defaultValue={tag} onChange={(e) => setParam("tag", e.target.value)} />
        <select className={inputClass} aria-label="Archived" value={archived} onChange={(e) => setParam("archived", e.target.value === "false" ? "" : e.target.value)}>
          <option value="false">Not archived</option>
          <option value="true">Archived</option>
          <option value="all">Archived or not</option>
        </select>
        {selected.length ? <span className={ui.muted}>{selected.length} selected (2 to 8 to compare)</span> : null}
      </div>
      <StorageQuotaNotice slug={slug} />
      <QueueSummary slug={slug} />
      {runs.isPending ? <Loading what="runs" /> : null}
      {runs.isError ? <ErrorState title="Could not load the runs" error={runs.error} onRetry={() => void runs.refetch()} /> : null}
      {runs.data && list.length === 0 ? (
        filtered ? (
          <EmptyState icon={<RunsIcon size={26} />} title="No run matches these filters">
            Clear the filters to see every run of the project.
          </EmptyState>
        ) : (
          <EmptyState
            icon={<RunsIcon size={26} />}
            title="No runs yet"
            action={
              <span className={ui.row}>
                <ButtonLink to={`/p/${slug}/datasets`} variant="primary">
                  Upload your data
                </ButtonLink>
                <ButtonLink to={`/p/${slug}/runs/new`}>Try the demo run</ButtonLink>
              </span>
            }
          >
            Start from your task: upload its prompts and answers, write and test a reward for them, then train on both. Or try the demo first (<code>grpo-tiny-arith</code> learns arithmetic on a CPU in minutes).
          </EmptyState>
        )
      ) : null}
      {list.length ? (
        <Table<Run>
          label="Runs"
          rows={list}
          rowKey={(r) => r.id}
          isSelected={(r) => selected.includes(r.id)}
          sort={{ key: sortKey, descending }}
          onSort={(key) => setParam("sort", key === sortKey && !descending ? `-${key}` : key === sortKey ? key : `-${key}`)}
          columns={[
            {
              key: "select",
              header: <span className="visually-hidden">Select</span>,
              cell: (r) => <input type="checkbox" aria-label={`Select ${r.name}`} checked={selected.includes(r.id)} onChange={() => toggle(r.id)} />,
            },
            {
              key: "name",
              header: "Name",
              sortKey: "name",
              cell: (r) => (
                <span style={{ display: "grid", minWidth: 180 }}>
                  <span className={ui.row}>
                    <Link to={`/p/${slug}/runs/${r.id}`}>{r.name}</Link>
                    {r.archived_at ? <span className={ui.pill}>archived</span> : null}
                  </span>
                  <span className={ui.muted}>{inputsLine(r.inputs)}</span>
                </span>
              ),
            },
            {
              key: "status",
              header: "Status",
              sortKey: "status",
              cell: (r) => (
                <span className={ui.row}>
                  <RunStatusPill status={r.status} />
                  <RewardErrorBadge rate={r.reward_error_rate} />
                  {r.queue_position ? (
                    <span className={ui.muted} title={r.waiting_for ? `Waits for ${r.waiting_for}` : undefined}>
                      #{r.queue_position} in queue
                    </span>
                  ) : null}
                </span>
              ),
            },
            { key: "reward", header: "Reward", cell: (r) => <Sparkline values={r.reward_sparkline} label={`Reward of ${r.name}`} /> },
            { key: "age", header: "Created", sortKey: "created_at", cell: (r) => <Time value={r.created_at} format="age" /> },
            { key: "duration", header: "Duration", sortKey: "started_at", cell: (r) => formatDuration(r.started_at, r.finished_at) },
            { key: "tags", header: "Tags", cell: (r) => <span className={ui.row}>{r.tags.map((t) => <span key={t} className={ui.pill}>{t}</span>)}</span> },
            { key: "priority", header: "Priority", sortKey: "priority", cell: (r) => r.priority },
          ]}
        />
      ) : null}
    </>
  );
}
