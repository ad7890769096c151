import { describe, expect, it } from "vitest";

import { sweepDetail, sweepTrials } from "../fixtures";
import { axisPosition, axisTicks, goodness, importanceRows, parcoordsData, stepTraces, stopPoint, viridis } from "./charts";

describe("parcoordsData", () => {
  const data = parcoordsData(sweepDetail.space, sweepTrials, "validation score");

  it("draws the trials with a value, one axis per parameter and the metric last", () => {
    expect(data.trials).toEqual([0, 1, 2, 3]); // trial 4 failed with no value
    expect(data.dimensions.map((d) => d.label)).toEqual(["actor.optim.lr (log)", "rollout.n", "rollout.temperature", "reward_version", "validation score"]);
    expect(data.dimensions[4]?.values).toEqual([0.42, 0.81, 0.1, 0.5]);
    expect(data.color).toEqual([0.42, 0.81, 0.1, 0.5]);
  });

  it("puts a log range on log10 of its values, ticked at powers of ten", () => {
    const lr = data.dimensions[0];
    expect(lr?.values.map((v) => Number(v.toFixed(3)))).toEqual([-5, -3.523, -3, -4.301]);
    expect(lr?.range).toEqual([-5, -3]);
    expect(lr?.tickvals).toEqual([-5, -4, -3]);
    expect(lr?.ticktext).toEqual(["1e-5", "1e-4", "1e-3"]);
  });

  it("keeps an integer range's bounds and draws choices as named categories", () => {
    expect(data.dimensions[1]).toEqual({ label: "rollout.n", values: [2, 8, 4, 6], range: [2, 8] });
    expect(data.dimensions[2]).toMatchObject({ values: [0, 1, 0, 1], tickvals: [0, 1], ticktext: ["0.7", "1"] });
  });

  it("labels input items with the given labeller", () => {
    const labelled = parcoordsData(sweepDetail.space, sweepTrials, "score", (param, value) => (param.type === "input" ? `#${String(value)}` : String(value)));
    expect(labelled.dimensions[3]?.ticktext).toEqual(["#7", "#8"]);
  });

  it("places values on their axis and ticks categories by name", () => {
    const n = data.dimensions[1]!;
    expect([2, 5, 8].map((v) => axisPosition(n, v))).toEqual([0, 0.5, 1]);
    expect(axisPosition(n, Number.NaN)).toBeNull();
    expect(axisTicks(n).map((t) => t.text)).toEqual(["2", "5", "8"]);
    expect(axisTicks(data.dimensions[2]!)).toEqual([
      { value: 0, text: "0.7" },
      { value: 1, text: "1" },
    ]);
  });
});

describe("goodness and viridis", () => {
  it("make the best value brightest in either direction", () => {
    const values = [0.1, 0.5, 0.9];
    expect(values.map((v) => goodness(v, values, "maximize"))).toEqual([0, 0.5, 1]);
    expect(values.map((v) => goodness(v, values, "minimize"))).toEqual([1, 0.5, 0]);
    expect(goodness(0.3, [0.3], "maximize")).toBe(1);
    expect([viridis(0), viridis(1), viridis(0.5)]).toEqual(["rgb(68, 1, 84)", "rgb(253, 231, 37)", "rgb(33, 145, 140)"]);
  });
});

describe("stepTraces", () => {
  const traces = stepTraces(sweepTrials, 1);

  it("draws a line per trial that reported, the best one thicker", () => {
    const lines = traces.filter((t) => t.name !== "pruned here");
    expect(lines.map((t) => t.name)).toEqual(["#0", "#1 (best)", "#2", "#3"]);
    expect(lines[1]).toMatchObject({ x: [1, 2, 3, 4], y: [0.3, 0.55, 0.7, 0.81], line: { width: 3 } });
    expect(lines[0]).toMatchObject({ line: { width: 1.5 } });
  });

  it("marks each pruned trial where it stopped", () => {
    const marks = traces.find((t) => t.name === "pruned here");
    expect(marks).toMatchObject({ x: [2], y: [0.1], mode: "markers", marker: { symbol: "x" } });
    expect(marks?.text).toEqual(["#2 pruned at step 2: 0.1"]);
  });

  it("has no marker trace when no trial was pruned", () => {
    expect(stepTraces(sweepTrials.filter((t) => t.state !== "pruned"), null).some((t) => t.name === "pruned here")).toBe(false);
  });
});

describe("stopPoint", () => {
  it("is the last point at or before the stop step", () => {
    const trial = { ...sweepTrials[2]!, intermediate: [[1, 0.05], [2, 0.1], [3, 0.2]] as [number, number][], stopped_at_step: 2 };
    expect(stopPoint(trial)).toEqual([2, 0.1]);
    expect(stopPoint({ ...trial, stopped_at_step: null })).toEqual([3, 0.2]);
    expect(stopPoint({ ...trial, intermediate: [] })).toBeNull();
  });
});

describe("importanceRows", () => {
  it("orders the parameters by importance", () => {
    expect(importanceRows({ a: 0.1, b: 0.7, c: 0.2 }).map((r) => [r.name, r.share])).toEqual([
      ["b", 0.7],
      ["c", 0.2],
      ["a", 0.1],
    ]);
  });
});
