import { expect, test } from "vitest";

import { yRange } from "./CheckpointChart";

test("equal scores get a small range around them, not one that reaches below 0", () => {
  const [low, high] = yRange([0.1, 0.1, 0.1]);
  expect(low).toBeGreaterThanOrEqual(0);
  expect(low).toBeLessThan(0.1);
  expect(high).toBeGreaterThan(0.1);
  expect(high).toBeLessThan(0.25);
});

test("a baseline at the lowest value sits above the axis", () => {
  const [low, high] = yRange([0.2, 0.6, 0.4]);
  expect(low).toBeLessThan(0.2);
  expect(high).toBeGreaterThan(0.6);
  expect(yRange([-1, 1])[0]).toBeLessThan(-1); // negative values keep their room
});
