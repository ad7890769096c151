import { describe, expect, it } from "vitest";

import type { MetricSeries } from "../api";
import { createSeriesBatcher, type SeriesShape } from "./seriesBatcher";

const shape: SeriesShape = { runs: [1], range: { min: null, max: null }, times: false, points: 800 };

function answer(keys: string[]): MetricSeries[] {
  return keys.map((key) => ({ run: 1, key, total: 1, downsampled: false, bucket_origin: 0, bucket_width: 1, steps: [1], values: [0.5] }));
}

/** A batcher over a recording fetcher: what each request asked for. */
function recorded() {
  const requests: { shape: SeriesShape; keys: string[] }[] = [];
  const load = createSeriesBatcher(async (s, keys) => {
    requests.push({ shape: s, keys });
    return answer(keys);
  }, 3);
  return { load, requests };
}

describe("series batcher", () => {
  it("sends the keys asked for in one task as one request, and gives each its own series", async () => {
    const { load, requests } = recorded();
    const [a, b] = await Promise.all([load(shape, "a"), load(shape, "b")]);
    expect(requests).toEqual([{ shape, keys: ["a", "b"] }]);
    expect(a.map((s) => s.key)).toEqual(["a"]);
    expect(b.map((s) => s.key)).toEqual(["b"]);
  });

  it("splits requests by shape and by the most keys one request may name", async () => {
    const { load, requests } = recorded();
    const wide = { ...shape, points: 1200 };
    await Promise.all([...["a", "b", "c", "d"].map((k) => load(shape, k)), load(wide, "a")]);
    expect(requests.map((r) => [r.shape.points, r.keys])).toEqual([
      [800, ["a", "b", "c"]],
      [800, ["d"]],
      [1200, ["a"]],
    ]);
  });

  it("asks once for a key two charts want, and a later task gets a request of its own", async () => {
    const { load, requests } = recorded();
    await Promise.all([load(shape, "a"), load(shape, "a")]);
    await load(shape, "b");
    expect(requests.map((r) => r.keys)).toEqual([["a"], ["b"]]);
  });

  it("fails every load of a request that failed", async () => {
    const load = createSeriesBatcher(() => Promise.reject(new Error("503")), 100);
    const results = await Promise.allSettled([load(shape, "a"), load(shape, "b")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
  });
});
