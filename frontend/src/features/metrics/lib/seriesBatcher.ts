/**
 * One metric key's series, loaded when its chart scrolls into view; the loads asked for
 * in the same task (the charts mounted by one commit) go out as one request per
 * shape (runs, step range, times, points), at most `maxKeys` keys each.
 */
import type { MetricSeries, StepRange } from "../api";

export type SeriesShape = { runs: number[]; range: StepRange; times: boolean; points: number };
export type FetchSeries = (shape: SeriesShape, keys: string[]) => Promise<MetricSeries[]>;
export type LoadSeries = (shape: SeriesShape, key: string) => Promise<MetricSeries[]>;

type Waiter = { resolve: (series: MetricSeries[]) => void; reject: (error: unknown) => void };
type Batch = { shape: SeriesShape; waiting: Map<string, Waiter[]> };

export function createSeriesBatcher(fetchSeries: FetchSeries, maxKeys: number): LoadSeries {
  let batches = new Map<string, Batch>();
  let scheduled = false;

  function send(batch: Batch, keys: string[]) {
    fetchSeries(batch.shape, keys).then(
      (series) => {
        for (const key of keys) {
          const mine = series.filter((s) => s.key === key);
          for (const waiter of batch.waiting.get(key) ?? []) waiter.resolve(mine);
        }
      },
      (error: unknown) => {
        for (const key of keys) for (const waiter of batch.waiting.get(key) ?? []) waiter.reject(error);
      },
    );
  }

  function flush() {
    scheduled = false;
    const due = batches;
    batches = new Map();
    for (const batch of due.values()) {
      const keys = [...batch.waiting.keys()];
      for (let i = 0; i < keys.length; i += maxKeys) send(batch, keys.slice(i, i + maxKeys));
    }
  }

  return (shape, key) =>
    new Promise<MetricSeries[]>((resolve, reject) => {
      const id = JSON.stringify([shape.runs, shape.range.min, shape.range.max, shape.times, shape.points]);
      let batch = batches.get(id);
      if (!batch) {
        batch = { shape, waiting: new Map() };
        batches.set(id, batch);
      }
      batch.waiting.set(key, [...(batch.waiting.get(key) ?? []), { resolve, reject }]);
      if (!scheduled) {
        scheduled = true;
        // After the current task's synchronous work: every chart mounted in the same
        // commit has asked by then, and no other task (a script's evaluation) comes first.
        queueMicrotask(flush);
      }
    });
}
