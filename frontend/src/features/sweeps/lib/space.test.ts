import { describe, expect, it } from "vitest";

import type { FieldSpec } from "../../runs/lib/configSchema";
import { defaultParam, floatGridMessage, gridPoints, gridSize } from "./space";
import type { Param } from "./types";

const number = (path: string, integer: boolean, bounds: { min?: number; max?: number } = {}): FieldSpec => ({ path, label: path, description: "", kind: { type: "number", integer, nullable: false, ...bounds } });

describe("gridSize", () => {
  it("multiplies the choice counts and the integer ranges' sizes", () => {
    const space: Param[] = [
      { name: "rollout.n", type: "int", low: 2, high: 8, step: 2 }, // 2, 4, 6, 8
      { name: "rollout.temperature", type: "choice", values: [0.7, 1.0] },
      { name: "reward_version", type: "input", values: [7, 8, 9] },
    ];
    expect(gridSize(space)).toEqual({ trials: 24 });
  });

  it("counts an integer range whose step does not land on its high end up to the last step below it", () => {
    expect(gridPoints({ name: "n", type: "int", low: 1, high: 10, step: 4 })).toBe(3); // 1, 5, 9
    expect(gridPoints({ name: "n", type: "int", low: 3, high: 3, step: 1 })).toBe(1);
  });

  it("names the float ranges that forbid a grid, and the message says what fixes it", () => {
    const space: Param[] = [
      { name: "actor.optim.lr", type: "float", low: 1e-5, high: 1e-3, log: true },
      { name: "rollout.n", type: "int", low: 2, high: 8, step: 2 },
    ];
    const size = gridSize(space);
    expect(size).toEqual({ floats: ["actor.optim.lr"] });
    expect(floatGridMessage(["actor.optim.lr"])).toMatch(/actor\.optim\.lr is a float range.*choice of values, or use random or TPE/);
  });

  it("makes no trial of an empty space", () => {
    expect(gridSize([])).toEqual({ trials: 0 });
  });
});

describe("defaultParam", () => {
  it("spans a tenth to ten times a positive float on a log scale", () => {
    expect(defaultParam(number("actor.optim.lr", false), 1e-6)).toEqual({ name: "actor.optim.lr", type: "float", low: 1e-7, high: 1e-5, log: true });
  });

  it("keeps a float at 0 linear, up to its schema maximum", () => {
    expect(defaultParam(number("algorithm.kl_ctrl.kl_coef", false, { min: 0, max: 1 }), 0)).toEqual({ name: "algorithm.kl_ctrl.kl_coef", type: "float", low: 0, high: 1, log: false });
  });

  it("holds the schema's bounds", () => {
    expect(defaultParam(number("reward.max_error_rate", false, { min: 0, max: 1 }), 0.5)).toMatchObject({ low: 0.05, high: 1 });
  });

  it("spans half to twice an integer, by 1", () => {
    expect(defaultParam(number("rollout.n", true, { min: 1 }), 4)).toEqual({ name: "rollout.n", type: "int", low: 2, high: 8, step: 1 });
  });

  it("offers an enum's base value and the next one, and both of a boolean", () => {
    const estimator = (current: unknown) => defaultParam({ path: "algorithm.adv_estimator", label: "", description: "", kind: { type: "enum", options: ["grpo", "gae", "rloo"], nullable: false } }, current);
    expect(estimator("gae")).toEqual({ name: "algorithm.adv_estimator", type: "choice", values: ["gae", "rloo"] });
    expect(estimator("rloo")).toMatchObject({ values: ["rloo", "grpo"] });
    expect(estimator(undefined)).toMatchObject({ values: ["grpo", "gae"] });
    expect(defaultParam({ path: "actor.use_kl_loss", label: "", description: "", kind: { type: "boolean" } }, true)).toEqual({ name: "actor.use_kl_loss", type: "choice", values: [true, false] });
  });
});
