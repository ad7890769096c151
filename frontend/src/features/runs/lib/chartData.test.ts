import { describe, expect, it } from "vitest";

import { appendPoints, ema, emaTail, fromApi, groupKeys, mergeWindow, minMaxBand, pointsForWidth, withLiveTail, xOf, type ChartSeries } from "./chartData";

function series(steps: number[], values: (number | null)[], downsampled = false, bucketWidth = 1): ChartSeries {
  return fromApi({ run: 1, key: "critic/score/mean", steps, values, downsampled, bucket_origin: 0, bucket_width: bucketWidth });
}

describe("chart data", () => {
  it("appends live points after the last step and reports only those as new", () => {
    const { series: next, appended, rewritten } = appendPoints(series([1, 2], [0.1, 0.2]), [
      { step: 4, value: 0.4 },
      { step: 3, value: 0.3 },
    ]);
    expect(next.points.map((p) => p.step)).toEqual([1, 2, 3, 4]);
    expect(appended.map((p) => p.step)).toEqual([3, 4]);
    expect(rewritten).toBe(false);
  });

  it("replaces a re-reported step instead of duplicating it", () => {
    const { series: next, appended, rewritten } = appendPoints(series([1, 2, 3], [0.1, 0.2, 0.3]), [{ step: 2, value: 0.25 }]);
    expect(next.points.map((p) => [p.step, p.value])).toEqual([
      [1, 0.1],
      [2, 0.25],
      [3, 0.3],
    ]);
    expect(appended).toEqual([]);
    expect(rewritten).toBe(true);
  });

  it("backfills a finer window into a downsampled series, keeping what lies outside it", () => {
    const coarse = series([0, 50, 100, 150, 200], [0, 5, 10, 15, 20], true);
    const window = series([98, 99, 100, 101, 102], [9.8, 9.9, 10, 10.1, 10.2]);
    const merged = mergeWindow(coarse, window);
    expect(merged.points.map((p) => p.step)).toEqual([0, 50, 98, 99, 100, 101, 102, 150, 200]);
    expect(merged.downsampled).toBe(true);
  });

  it("keeps each downsampled bucket's extremes as a min/max band, on the server's bucket grid", () => {
    // The server sends each bucket's lowest and highest point (at their real steps), and
    // its grid: here buckets of 10 steps from step 0.
    const s = series([0, 3, 10, 14, 20, 27], [1, 9, -4, 2, 5, 6], true, 10);
    const band = minMaxBand(s);
    expect(band.lo).toEqual([1, -4, 5]);
    expect(band.hi).toEqual([9, 2, 6]);
    expect(band.steps).toHaveLength(3);
  });

  it("draws no band for a series that was not downsampled", () => {
    expect(minMaxBand(series([1, 2, 3], [1, 2, 3])).steps).toEqual([]);
  });

  it("smooths with a debiased EMA: the first value is kept, a constant stays constant", () => {
    expect(ema([2, 2, 2], 0.9)).toEqual([2, 2, 2].map(() => expect.closeTo(2, 10)));
    const smoothed = ema([0, 10], 0.5);
    expect(smoothed[0]).toBeCloseTo(0);
    expect(smoothed[1]).toBeCloseTo(20 / 3); // (0.5*0 + 0.5*10 weighted) / (1 - 0.25)
    expect(ema([1, null, 3], 0)).toEqual([1, null, 3]);
  });

  it("continues the EMA over live points as if the whole series was smoothed at once", () => {
    const all = [1, 4, 2, 8, 5];
    expect(emaTail(all, 2, 0.6)).toEqual(ema(all, 0.6).slice(3));
  });

  it("groups keys by prefix, familiar groups first", () => {
    const groups = groupKeys(["timing_s/gen", "actor/pg_loss", "critic/advantages/mean", "custom", "perf/throughput"]);
    expect(groups.map(([g]) => g)).toEqual(["actor", "critic", "perf", "timing_s", "other"]);
  });

  it("puts the reward's own metrics in the reward group, first, beside its components", () => {
    const groups = groupKeys(["critic/advantages/mean", "reward/error_rate", "critic/score/mean", "critic/rewards/mean", "reward/format/mean"]);
    expect(groups[0]).toEqual(["reward", ["critic/rewards/mean", "critic/score/mean", "reward/error_rate", "reward/format/mean"]]);
    expect(groups[1]).toEqual(["critic", ["critic/advantages/mean"]]);
  });

  it("builds series with wall-clock times and plots them as epoch ms on the time axis", () => {
    const timed = fromApi({ run: 1, key: "reward", steps: [1, 2, 3], values: [0.1, 0.2, 0.3], downsampled: false, times: [100, null, 102.5] });
    expect(timed.points.map((p) => p.time)).toEqual([100, undefined, 102.5]);
    expect(timed.points.map((p) => xOf(p, "time"))).toEqual([100_000, null, 102_500]);
    expect(timed.points.map((p) => xOf(p, "step"))).toEqual([1, 2, 3]);
  });

  it("keeps each live point's time when appending it", () => {
    const timed = fromApi({ run: 1, key: "reward", steps: [1], values: [0.1], downsampled: false, times: [100] });
    const { series: next, appended } = appendPoints(timed, [{ step: 2, value: 0.2, time: 105 }]);
    expect(next.points.map((p) => [p.step, p.time])).toEqual([
      [1, 100],
      [2, 105],
    ]);
    expect(appended.map((p) => xOf(p, "time"))).toEqual([105_000]);
  });

  it("places a timed band's buckets at their mean time, and at none when a time is unknown", () => {
    const timed = fromApi({ run: 1, key: "reward", steps: [0, 3, 10, 14], values: [1, 9, -4, 2], downsampled: true, times: [10, 12, 20, null], bucket_origin: 0, bucket_width: 10 });
    const band = minMaxBand(timed);
    expect(band.times).toEqual([11, null]);
  });

  it("groups live points appended after a downsampled series into buckets of the same grid", () => {
    const s = appendPoints(series([0, 7, 12, 15], [1, 2, 3, 0], true, 10), [
      { step: 16, value: 9 },
      { step: 21, value: -1 },
    ]).series;
    const band = minMaxBand(s);
    expect(band.lo).toEqual([1, 0, -1]);
    expect(band.hi).toEqual([2, 9, -1]);
  });

  it("merges the live points that arrived past the fetched data, once each", () => {
    const fetched = [series([1, 2, 3], [0.1, 0.2, 0.3])];
    const live = [{ run: 1, points: [2, 3, 4, 5].map((step) => ({ step, value: step / 10 })) }];
    const [merged] = withLiveTail("critic/score/mean", fetched, live, 0);
    expect(merged?.points.map((p) => p.step)).toEqual([1, 2, 3, 4, 5]);
  });

  it("gives a run with live points but nothing fetched its points inside the step range", () => {
    const live = [{ run: 2, points: [3, 8, 9].map((step) => ({ step, value: 1 })) }];
    const merged = withLiveTail("critic/score/mean", [], live, 5);
    expect(merged.map((s) => [s.run, s.points.map((p) => p.step)])).toEqual([[2, [8, 9]]]);
  });

  it("asks for about two points per pixel of the plot, in steps of 100, within the API's bounds", () => {
    expect(pointsForWidth(460)).toBe(900); // 400 px of plot: 802 points
    expect(pointsForWidth(480)).toBe(pointsForWidth(460));
    expect(pointsForWidth(10)).toBe(200);
    expect(pointsForWidth(10_000)).toBe(5000);
  });
});
