import { describe, expect, it } from "vitest";

import { legendRoom } from "./chartLegend";

describe("legendRoom", () => {
  it("needs no room for a single run's chart", () => {
    expect(legendRoom(["baseline"], 460)).toBe(0);
  });

  it("takes one row when the names fit side by side", () => {
    expect(legendRoom(["baseline", "longer name run"], 460)).toBe(30);
  });

  it("takes a row per name when the widest name fills a row", () => {
    const names = Array.from({ length: 8 }, (_, i) => `run number ${i} with a long name`);
    expect(legendRoom(names, 460)).toBe(10 + 8 * 20);
  });
});
