import { describe, expect, it } from "vitest";

import type { RewardVersion, RewardVersionSummary } from "../api";
import { withSavedVersion } from "./versions";

function summary(number: number): RewardVersionSummary {
  return {
    id: 100 + number,
    function: 7,
    number,
    code_hash: `h${number}`,
    entrypoint: "compute_score",
    message: `v${number}`,
    author: "ada",
    created_at: "2026-11-25T05:00:00Z",
  };
}

describe("withSavedVersion", () => {
  const saved: RewardVersion = { ...summary(3), code: "def compute_score(): ..." };

  it("puts the saved version at the head of the list, without its code", () => {
    const list = withSavedVersion([summary(2), summary(1)], saved);
    expect(list.map((v) => v.number)).toEqual([3, 2, 1]);
    expect(list[0]).not.toHaveProperty("code");
  });

  it("does not list a version twice when the refetch already has it", () => {
    const list = withSavedVersion([summary(3), summary(2)], saved);
    expect(list.map((v) => v.number)).toEqual([3, 2]);
  });

  it("starts a list for a function's first version", () => {
    expect(withSavedVersion(undefined, saved).map((v) => v.number)).toEqual([3]);
  });
});
