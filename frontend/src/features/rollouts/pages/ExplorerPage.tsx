import { useCallback, useEffect, useMemo, useState } from "react";
import { Link, useNavigate, useSearchParams } from "react-router";

import { layoutClass } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import { useMe } from "../../auth/hooks";
import { useEvaluation } from "../../evaluations/hooks";
import { useRun } from "../../runs/hooks";
import type { Sample } from "../../samples/api";
import { useLabelToggle, useSample, useSampleList, useSteps } from "../../samples/hooks";
import { Distributions } from "../components/Distributions";
import { ExportLabelled } from "../components/ExportLabelled";
import { FilterBar } from "../components/FilterBar";
import { QUICK_LABELS } from "../components/LabelButtons";
import review from "../components/review.module.css";
import { SampleDetail } from "../components/SampleDetail";
import { SampleList } from "../components/SampleList";
import { type ExplorerFilters, parseFilters, sampleQuery, writeFilters } from "../lib/explorerQuery";
import { useDocumentKeys } from "../lib/useDocumentKeys";
import styles from "./ExplorerPage.module.css";
import { RunHeader, useRunIds } from "./shared";

const LIVE = new Set(["queued", "starting", "running"]);

/** Index of the next row (in `direction`) whose `key` differs from the current row's. */
function nextDifferent(samples: Sample[], from: number, direction: 1 | -1, key: (s: Sample) => string) {
  const current = samples[from];
  if (!current) return from;
  for (let i = from + direction; i >= 0 && i < samples.length; i += direction) {
    if (key(samples[i]!) !== key(current)) return i;
  }
  return from;
}

/**
 * The rollout explorer of one run: filters, the sample list, the selected sample.
 * `embedded`: shown as the run page's Samples tab, under the run's own header.
 */
export function ExplorerPage({ embedded = false }: { embedded?: boolean }) {
  const { slug, runId, base } = useRunIds();
  const [params, setParams] = useSearchParams();
  const navigate = useNavigate();
  const filters = useMemo(() => parseFilters(params), [params]);
  const run = useRun(runId);
  const live = LIVE.has(run.data?.status ?? "");
  // An evaluation's responses are filtered by model (each model answers at its step).
  const evaluation = useEvaluation(runId, run.data?.kind === "evaluation");
  const models = evaluation.data?.models;
  const steps = useSteps(runId, live);
  const stepList = useMemo(() => (steps.data?.steps ?? []).map((s) => s.step), [steps.data]);
  const latest = stepList[stepList.length - 1];

  const setFilters = useCallback(
    (next: ExplorerFilters) => setParams(writeFilters(next, params), { replace: true }),
    [params, setParams],
  );

  // "Follow latest": the range's end (and a one-step range's start) tracks the newest step;
  // with no range yet (the run page's Samples tab), every step up to the newest.
  useEffect(() => {
    if (!filters.follow || latest === undefined || filters.stepMax === latest) return;
    const single = filters.stepMin !== null && filters.stepMin === filters.stepMax;
    setFilters({ ...filters, stepMax: latest, stepMin: single ? latest : filters.stepMin });
  }, [filters, latest, setFilters]);

  const query = useMemo(() => sampleQuery(runId, filters), [runId, filters]);
  const list = useSampleList(query, live);
  const samples = list.pager.items;
  // Set once, during render (React re-renders at once): what sits below the list mounts
  // after its first page and stays.
  const [belowShown, setBelowShown] = useState(false);
  if (list.pager.started && !belowShown) setBelowShown(true);
  const selectedId = params.get("sample") ? Number(params.get("sample")) : null;
  const listed = samples.find((s) => s.id === selectedId);
  // The detail (fresh after labelling) wins; the list's copy shows while it loads.
  const fetched = useSample(selectedId);
  const selected = (fetched.data?.id === selectedId ? fetched.data : undefined) ?? listed ?? null;
  const { patch } = list;
  useEffect(() => {
    if (fetched.data) patch(fetched.data);
  }, [fetched.data, patch]);
  const me = useMe().data?.username ?? null;
  const toggle = useLabelToggle();

  const select = useCallback(
    (id: number | null) => {
      const next = new URLSearchParams(params);
      if (id === null) next.delete("sample");
      else next.set("sample", String(id));
      setParams(next, { replace: true });
    },
    [params, setParams],
  );

  // Select the first sample once there is one, so the keyboard works straight away.
  useEffect(() => {
    if (selectedId === null && samples[0]) select(samples[0].id);
  }, [selectedId, samples, select]);

  // The shortcuts work from the moment the page loads, whatever has focus (typing aside).
  useDocumentKeys((event) => {
    const index = samples.findIndex((s) => s.id === selectedId);
    const moveTo = (i: number) => {
      const target = samples[Math.max(0, Math.min(samples.length - 1, i))];
      if (target) select(target.id);
    };
    const key = event.key;
    const handled = () => event.preventDefault();
    if (key === "ArrowDown" || key === "j") return handled(), moveTo(index + 1);
    if (key === "ArrowUp" || key === "k") return handled(), moveTo(index - 1);
    if (key === "]") return handled(), moveTo(nextDifferent(samples, index, 1, (s) => `${s.step}/${s.group_id}`));
    if (key === "[") return handled(), moveTo(nextDifferent(samples, index, -1, (s) => `${s.step}/${s.group_id}`));
    if (key === "." || key === ",") {
      handled();
      const current = filters.stepMin === filters.stepMax ? filters.stepMin : null;
      const at = current === null ? (key === "." ? -1 : stepList.length) : stepList.indexOf(current);
      const step = stepList[at + (key === "." ? 1 : -1)];
      if (step !== undefined) setFilters({ ...filters, stepMin: step, stepMax: step, follow: false });
      return undefined;
    }
    if (key === "Enter" && selected) {
      handled();
      navigate(`${base}/group/${selected.step}/${encodeURIComponent(selected.group_id)}`);
      return undefined;
    }
    const quick = QUICK_LABELS[Number(key) - 1];
    if (quick && selected && !event.ctrlKey && !event.metaKey) {
      handled();
      const on = !selected.labels.some((l) => l.label === quick && (me === null || l.author === me));
      toggle.mutate({ sample: selected.id, label: quick, on });
    }
    return undefined;
  });

  return (
    <div className={layoutClass.page} style={embedded ? { padding: 0 } : undefined}>
      {embedded ? null : <RunHeader title="Rollouts" />}
      <FilterBar filters={filters} steps={stepList} live={live} onChange={setFilters} models={models} />
      <p className={ui.muted}>
        Keys: <span className={review.kbd}>↑</span>/<span className={review.kbd}>↓</span> sample ·{" "}
        <span className={review.kbd}>[</span>/<span className={review.kbd}>]</span> group ·{" "}
        <span className={review.kbd}>,</span>/<span className={review.kbd}>.</span> step ·{" "}
        <span className={review.kbd}>Enter</span> open group · <span className={review.kbd}>1</span>–
        <span className={review.kbd}>4</span> label · <Link to={`${base}/prompts`}>all prompts</Link>
      </p>
      <div className={styles.explorer}>
        <div className={review.section}>
          <span
            className={ui.muted}
            role="status"
            data-testid="list-status"
            data-generation={list.generation}
            data-query={list.query}
            data-state={list.pager.started ? "ready" : "loading"}
          >
            {list.error
              ? ""
              : !list.pager.started
                ? "Loading samples…"
                : `${samples.length.toLocaleString()}${list.pager.next ? "+" : ""} samples`}
          </span>
          {list.error ? <Notice tone="error">{list.error.message}</Notice> : null}
          {list.pager.started && samples.length === 0 && !list.error ? (
            <div className={ui.card}>No samples match these filters.</div>
          ) : (
            <SampleList
              samples={samples}
              selectedId={selectedId}
              hasMore={list.pager.next !== null}
              loading={list.loading}
              component={filters.component}
              onSelect={(s) => select(s.id)}
              onLoadMore={list.loadMore}
            />
          )}
        </div>
        {selected ? (
          <SampleDetail sample={selected} base={base} me={me} />
        ) : (
          <div className={ui.card}>
            {fetched.error ? fetched.error.message : "Pick a sample to read it."}
          </div>
        )}
      </div>
      {/* Below the list, and asked for once its first page is in: on a busy server their
          requests (the score histogram, 2,000 length points, the project's datasets) would
          otherwise share it with the page the reader came for. Mounted from then on: were
          they unmounted at each filter change, each remount would ask again for the run,
          the datasets and the distributions (the server's one thread, ahead of the next
          change's page). A new step range's distributions wait for that range's page. */}
      {belowShown ? (
        <>
          <Distributions
            run={runId}
            stepMin={filters.stepMin}
            stepMax={filters.stepMax}
            ready={list.pager.started}
            onPickScores={(low, high) => setFilters({ ...filters, scoreMin: low, scoreMax: high })}
            onPickSample={(id) => select(id)}
          />
          <ExportLabelled run={runId} project={slug} />
        </>
      ) : null}
    </div>
  );
}
