import { afterEach, beforeEach, describe, expect, it } from "vitest";

import { chartColumns, firstScreenSeries } from "./chartView";

// global.css's layout properties (jsdom loads no stylesheet).
const LAYOUT = { "--sidebar-width": "232px", "--content-max-width": "1120px", "--content-padding-x": "40px", "--chart-min-width": "340px", "--chart-gap": "12px", "--chart-cell-inset": "5px" };

beforeEach(() => {
  for (const [name, value] of Object.entries(LAYOUT)) document.documentElement.style.setProperty(name, value);
});
afterEach(() => document.documentElement.removeAttribute("style"));

describe("chartColumns", () => {
  it("fits two 514 px cells in a 1,040 px column (a 1440 px window: the column at its widest)", () => {
    expect(chartColumns(1440)).toEqual({ columns: 2, slotWidth: 504 });
    expect(chartColumns(2560)).toEqual({ columns: 2, slotWidth: 504 });
  });

  it("narrows the column below its widest, and keeps one column at least", () => {
    expect(chartColumns(1100)).toEqual({ columns: 2, slotWidth: (1100 - 232 - 80 - 12) / 2 - 10 });
    expect(chartColumns(800)).toEqual({ columns: 1, slotWidth: 800 - 232 - 80 - 10 });
  });

  it("knows nothing of the narrow shell's layout, or without the stylesheet", () => {
    expect(chartColumns(760)).toBeNull();
    document.documentElement.removeAttribute("style");
    expect(chartColumns(1440)).toBeNull();
  });
});

describe("firstScreenSeries", () => {
  const keys = ["actor/kl", "actor/entropy", "reward/mean", "reward/std", "reward/max", "timing_s/step"];

  it("is the first rows, each group's charts in rows of the grid's columns, at the slots' width, for the URL's range and axis", () => {
    const first = firstScreenSeries([3, 5], keys, new URLSearchParams("from=10&to=90&axis=time"), 1440);
    // Two columns: the reward group's first row, then its second (one chart).
    expect(first).toEqual({ shape: { runs: [3, 5], range: { min: 10, max: 90 }, times: true, points: 900 }, keys: ["reward/max", "reward/mean", "reward/std"] });
    expect(firstScreenSeries([3, 5], keys, new URLSearchParams(), 1440, undefined, 3)?.keys).toEqual(["reward/max", "reward/mean", "reward/std", "actor/entropy", "actor/kl"]);
  });

  it("keeps to the charts the URL chose", () => {
    const first = firstScreenSeries([3, 5], keys, new URLSearchParams("charts=actor/kl,timing_s/step"), 1440);
    expect(first?.keys).toEqual(["actor/kl", "timing_s/step"]);
    expect(first?.shape).toEqual({ runs: [3, 5], range: { min: null, max: null }, times: false, points: 900 });
  });

  it("is nothing without keys", () => {
    expect(firstScreenSeries([3, 5], [], new URLSearchParams(), 1440)).toBeNull();
  });
});
