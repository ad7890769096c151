import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { useCallback, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";

import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { inputClass } from "../../../components/Field";
import { Loading } from "../../../components/Spinner";
import { RunsIcon } from "../../../components/icons";
import { queryMetrics, runKeys, type StepRange } from "../api";
import { appendPoints, fromApi, groupKeys, type ChartSeries, type Point, type XAxis } from "../chartData";
import { LazyMount } from "./LazyMount";
import { CHART_HEIGHT, MetricChart, type ChartHandle, type ChartSettings } from "./MetricChart";
import styles from "./ChartGrid.module.css";

/** One live metrics record; `time` is the record's own (the trainer's clock, unix seconds). */
export type LiveMetrics = { run: number; step: number; time: number; values: Record<string, number | null> };

type ChartGridProps = {
  runs: number[];
  keys: string[];
  runLabel: (run: number) => string;
  onPointClick?: (run: number, step: number) => void;
  /** The grid hands the parent a function that appends a live metrics record. */
  bindLive?: (append: ((record: LiveMetrics) => void) | null) => void;
  emptyHint: string;
};

function readRange(params: URLSearchParams): StepRange {
  const number = (name: string) => {
    const raw = params.get(name);
    return raw !== null && raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : null;
  };
  return { min: number("from"), max: number("to") };
}

/**
 * The chart grid: one chart per metric key grouped by prefix, mounted when scrolled into
 * view. The step range, chosen charts, smoothing, log scale and x axis live in the URL
 * (`from`, `to`, `charts`, `smooth`, `log`, `axis`), so a view can be shared.
 */
export function ChartGrid({ runs, keys, runLabel, onPointClick, bindLive, emptyHint }: ChartGridProps) {
  const [params, setParams] = useSearchParams();
  const range = readRange(params);
  const chosenParam = params.get("charts");
  const chosen = useMemo(() => (chosenParam ? chosenParam.split(",").filter((k) => keys.includes(k)) : keys), [chosenParam, keys]);
  const axis: XAxis = params.get("axis") === "time" ? "time" : "step";
  const [picking, setPicking] = useState(false);

  const metrics = useQuery({
    queryKey: runKeys.metrics(runs, chosen, range, axis === "time"),
    queryFn: ({ signal }) => queryMetrics(runs, chosen, range, axis === "time", signal),
    enabled: chosen.length > 0,
    staleTime: Infinity,
    // A new key or range refetches; the charts stay (and are updated) meanwhile.
    placeholderData: keepPreviousData,
  });

  // Live points go into this store and straight to the charts (extendTraces); React
  // state is not touched, so nothing re-renders per point.
  const store = useRef(new Map<string, ChartSeries[]>());
  // Until the series with times arrive, the previous ones (without) stay on a step axis.
  const shownAxis: XAxis = axis === "time" && metrics.isPlaceholderData ? "step" : axis;
  const smoothParam = params.get("smooth");
  const logY = params.get("log") === "1";
  const settings: ChartSettings = useMemo(
    () => ({ smoothing: Math.min(0.99, Math.max(0, Number(smoothParam ?? "0.6") || 0)), logY, axis: shownAxis }),
    [smoothParam, logY, shownAxis],
  );
  const fetched = metrics.data;
  const base = useMemo(() => {
    const map = new Map<string, ChartSeries[]>();
    for (const s of fetched ?? []) map.set(s.key, [...(map.get(s.key) ?? []), fromApi(s)]);
    return map;
  }, [fetched]);
  if (store.current !== base && fetched) store.current = base;

  const handles = useRef(new Map<string, ChartHandle>());
  const register = useCallback((metric: string, handle: ChartHandle | null) => {
    if (handle) handles.current.set(metric, handle);
    else handles.current.delete(metric);
  }, []);
  const onHover = useCallback((x: number | null) => {
    for (const handle of handles.current.values()) handle.hover(x);
  }, []);

  const live = useCallback(
    (record: LiveMetrics) => {
      if (range.max !== null && record.step > range.max) return; // outside the window shown
      for (const [key, value] of Object.entries(record.values)) {
        if (!chosen.includes(key)) continue;
        const list = store.current.get(key) ?? [];
        let s = list.find((x) => x.run === record.run);
        if (!s) {
          s = { key, run: record.run, points: [], downsampled: false };
          list.push(s);
          store.current.set(key, list);
        }
        const point: Point = { step: record.step, value, time: record.time };
        const result = appendPoints(s, [point]);
        list[list.indexOf(s)] = result.series;
        handles.current.get(key)?.append(record.run, result.appended, result.series.points.map((p) => p.value));
      }
    },
    [chosen, range.max],
  );
  bindLive?.(live);

  function update(changes: Record<string, string | null>) {
    const next = new URLSearchParams(params);
    for (const [name, value] of Object.entries(changes)) {
      if (value === null || value === "") next.delete(name);
      else next.set(name, value);
    }
    setParams(next, { replace: true });
  }

  function toggleChart(key: string) {
    const set = new Set(chosen);
    if (set.has(key)) set.delete(key);
    else set.add(key);
    update({ charts: set.size === keys.length ? null : [...set].join(",") });
  }

  if (!keys.length) {
    return (
      <EmptyState icon={<RunsIcon size={26} />} title="No metrics yet">
        {emptyHint}
      </EmptyState>
    );
  }

  return (
    <section aria-label="Charts">
      <div className={styles.toolbar}>
        <label>
          Smoothing
          <input type="range" min={0} max={0.99} step={0.01} value={settings.smoothing} onChange={(e) => update({ smooth: e.target.value })} aria-label="Smoothing" />
          <span>{settings.smoothing.toFixed(2)}</span>
        </label>
        <label>
          <input type="checkbox" checked={settings.logY} onChange={(e) => update({ log: e.target.checked ? "1" : null })} /> Log scale
        </label>
        <div role="group" aria-label="X axis" className={styles.axis}>
          {(["step", "time"] as const).map((choice) => (
            <Button key={choice} variant={axis === choice ? "primary" : "secondary"} aria-pressed={axis === choice} onClick={() => update({ axis: choice === "time" ? "time" : null })}>
              {choice === "step" ? "Step" : "Wall time"}
            </Button>
          ))}
        </div>
        <label>
          Steps from
          <input className={`${inputClass} ${styles.small}`} type="number" aria-label="First step" defaultValue={range.min ?? ""} onBlur={(e) => update({ from: e.target.value })} />
        </label>
        <label>
          to
          <input className={`${inputClass} ${styles.small}`} type="number" aria-label="Last step" defaultValue={range.max ?? ""} onBlur={(e) => update({ to: e.target.value })} />
        </label>
        <Button onClick={() => setPicking((p) => !p)} aria-expanded={picking}>
          Charts ({chosen.length}/{keys.length})
        </Button>
      </div>
      {picking ? (
        <fieldset className={styles.picker} aria-label="Chosen charts">
          {keys.map((key) => (
            <label key={key}>
              <input type="checkbox" checked={chosen.includes(key)} onChange={() => toggleChart(key)} /> {key}
            </label>
          ))}
        </fieldset>
      ) : null}
      {metrics.isPending && chosen.length ? <Loading what="metrics" /> : null}
      {metrics.isError ? <ErrorState title="Could not load the metrics" error={metrics.error} onRetry={() => void metrics.refetch()} /> : null}
      {metrics.data
        ? groupKeys(chosen).map(([group, groupKeysList]) => (
            <div key={group} className={styles.group}>
              <h3 className={styles.groupTitle}>{group}</h3>
              <div className={styles.grid}>
                {groupKeysList.map((key) => (
                  <div key={key} className={styles.cell} data-chart-slot={key}>
                    <LazyMount height={CHART_HEIGHT}>
                      <MetricChart
                        metric={key}
                        series={store.current.get(key) ?? []}
                        runLabel={runLabel}
                        settings={settings}
                        onPointClick={onPointClick}
                        onHover={onHover}
                        register={register}
                      />
                    </LazyMount>
                  </div>
                ))}
              </div>
            </div>
          ))
        : null}
    </section>
  );
}
