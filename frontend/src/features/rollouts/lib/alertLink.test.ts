import { evidenceSearch } from "./alertLink";
import { parseFilters } from "./explorerQuery";

describe("evidenceSearch", () => {
  it("opens an alert's zero-spread groups over its window of steps", () => {
    const search = evidenceSearch({
      kind: "zero_spread_groups",
      step: 50,
      evidence: { step_min: 40, step_max: 50, component: null },
    });
    expect(search).toBe("steps=40-50&signal=zero");
  });

  it("shows the dominating component and the reward errors", () => {
    const dominance = parseFilters(
      new URLSearchParams(
        evidenceSearch({ kind: "reward_component_dominance", step: 9, evidence: { step_min: 5, step_max: 9, component: "format" } }),
      ),
    );
    expect(dominance).toMatchObject({ stepMin: 5, stepMax: 9, component: "format" });
    expect(parseFilters(new URLSearchParams(evidenceSearch({ kind: "reward_errors", step: 3 })))).toMatchObject({
      stepMin: 3,
      stepMax: 3,
      errorsOnly: true,
    });
  });
});
