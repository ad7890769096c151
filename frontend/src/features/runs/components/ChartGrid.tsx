import { useCallback, useMemo, useRef, useState } from "react";
import { useSearchParams } from "react-router";

import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { inputClass } from "../../../components/Field";
import { RunsIcon } from "../../../components/icons";
import { appendPoints, groupKeys, withLiveTail, type ChartSeries, type LiveTail, type Point } from "../lib/chartData";
import { axisIn, chosenCharts, rangeIn } from "../lib/chartView";
import { headlineCharts, type Headline } from "../lib/headline";
import styles from "./ChartGrid.module.css";
import { ChartSlot, type SeriesStore } from "./ChartSlot";
import { LazyMount } from "./LazyMount";
import { CHART_HEIGHT, type ChartHandle } from "./MetricChart";

/** Live points kept per key and run, for the charts whose data is still being fetched. */
const LIVE_TAIL = 2000;

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
  /** Pin the headline charts (reward, validation, length, KL, entropy, components) on top. */
  headline?: boolean;
};

/**
 * The chart grid: one chart per metric key grouped by prefix, mounted when scrolled into
 * view. The step range, chosen charts, smoothing, log scale and x axis live in the URL
 * (`from`, `to`, `charts`, `smooth`, `log`, `axis`), so a view can be shared.
 */
export function ChartGrid({ runs, keys, runLabel, onPointClick, bindLive, emptyHint, headline = false }: ChartGridProps) {
  const [params, setParams] = useSearchParams();
  const range = rangeIn(params);
  const chosenParam = params.get("charts");
  const chosen = useMemo(() => chosenCharts(chosenParam, keys), [chosenParam, keys]);
  const axis = axisIn(params);
  const [picking, setPicking] = useState(false);

  const smoothParam = params.get("smooth");
  const smoothing = Math.min(0.99, Math.max(0, Number(smoothParam ?? "0.6") || 0));
  const logY = params.get("log") === "1";

  // What each mounted chart draws (`drawn`), and every key's latest live points (`live`),
  // which a chart whose request was still out merges in when its data arrives. Live points
  // go straight to the charts (extendTraces); React state is not touched per point.
  const drawn = useRef(new Map<string, ChartSeries[]>());
  const live = useRef(new Map<string, LiveTail[]>());
  const firstStep = useRef(0);
  firstStep.current = range.min ?? 0;
  const store: SeriesStore = useMemo(
    () => ({
      adopt: (key, fetched) => {
        const merged = withLiveTail(key, fetched, live.current.get(key) ?? [], firstStep.current);
        drawn.current.set(key, merged);
        return merged;
      },
    }),
    [],
  );

  const handles = useRef(new Map<string, ChartHandle>());
  const register = useCallback((metric: string, handle: ChartHandle | null) => {
    if (handle) handles.current.set(metric, handle);
    else handles.current.delete(metric);
  }, []);
  const onHover = useCallback((x: number | null) => {
    for (const handle of handles.current.values()) handle.hover(x);
  }, []);

  const appendLive = useCallback(
    (record: LiveMetrics) => {
      if (range.max !== null && record.step > range.max) return; // outside the window shown
      for (const [key, value] of Object.entries(record.values)) {
        if (!chosen.includes(key)) continue;
        const point: Point = { step: record.step, value, time: record.time };
        const tails = live.current.get(key) ?? [];
        live.current.set(key, tails);
        let tail = tails.find((t) => t.run === record.run);
        if (!tail) tails.push((tail = { run: record.run, points: [] }));
        tail.points.push(point);
        if (tail.points.length > LIVE_TAIL) tail.points.splice(0, tail.points.length - LIVE_TAIL);
        const list = drawn.current.get(key);
        if (!list) continue; // not drawn yet: its data comes with this point, or merges it
        let s = list.find((x) => x.run === record.run);
        if (!s) list.push((s = { key, run: record.run, points: [], downsampled: false }));
        const result = appendPoints(s, [point]);
        list[list.indexOf(s)] = result.series;
        handles.current.get(key)?.append(record.run, result.appended, result.series.points.map((p) => p.value));
      }
    },
    [chosen, range.max],
  );
  bindLive?.(appendLive);

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

  const pinned: Headline[] = headline ? headlineCharts(chosen) : [];
  const pinnedKeys = new Set(pinned.map((h) => h.key));
  const cell = (key: string, head?: Headline) => (
    <div key={key} className={styles.cell} data-chart-slot={key} data-headline={head ? "true" : undefined}>
      <LazyMount height={CHART_HEIGHT}>
        {(width) => (
          <ChartSlot
            metric={key}
            title={head?.title}
            spread={head?.band}
            runs={runs}
            range={range}
            axis={axis}
            smoothing={smoothing}
            logY={logY}
            width={width}
            store={store}
            runLabel={runLabel}
            onPointClick={onPointClick}
            onHover={onHover}
            register={register}
          />
        )}
      </LazyMount>
    </div>
  );

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
          <input type="range" min={0} max={0.99} step={0.01} value={smoothing} onChange={(e) => update({ smooth: e.target.value })} aria-label="Smoothing" />
          <span>{smoothing.toFixed(2)}</span>
        </label>
        <label>
          <input type="checkbox" checked={logY} onChange={(e) => update({ log: e.target.checked ? "1" : null })} /> Log scale
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
      {pinned.length ? (
        <div className={styles.group} role="group" aria-label="Headline charts">
          <h3 className={styles.groupTitle}>Headline</h3>
          <div className={styles.grid}>{pinned.map((head) => cell(head.key, head))}</div>
        </div>
      ) : null}
      {groupKeys(chosen.filter((k) => !pinnedKeys.has(k))).map(([group, groupKeysList]) => (
        <div key={group} className={styles.group}>
          <h3 className={styles.groupTitle}>{group}</h3>
          <div className={styles.grid}>{groupKeysList.map((key) => cell(key))}</div>
        </div>
      ))}
    </section>
  );
}
