import { NO_FILTERS, parseFilters, sampleQuery, writeFilters } from "./explorerQuery";

describe("explorer filters in the URL", () => {
  it("reads an alert's link to zero-spread groups over a step range", () => {
    const filters = parseFilters(new URLSearchParams("steps=40-50&groups=g1,g2"));
    expect(filters).toMatchObject({ stepMin: 40, stepMax: 50, groups: ["g1", "g2"] });
    expect(sampleQuery(7, filters)).toEqual({ run: 7, step_min: 40, step_max: 50, groups: "g1,g2" });
  });

  it("reads a single step as a one-step range", () => {
    expect(parseFilters(new URLSearchParams("step=3"))).toMatchObject({ stepMin: 3, stepMax: 3 });
  });

  it("ignores malformed values instead of failing", () => {
    const filters = parseFilters(new URLSearchParams("step=-1&score_min=abc&signal=maybe"));
    expect(filters).toEqual(NO_FILTERS);
  });

  it("round-trips every filter and keeps unrelated parameters", () => {
    const filters = {
      ...NO_FILTERS,
      stepMin: 2,
      stepMax: 9,
      split: "train",
      scoreMin: 0.5,
      scoreMax: 1,
      dataSource: "arith",
      rewardVersion: 4,
      label: "good",
      errorsOnly: true,
      episodesOnly: true,
      q: "answer",
      signal: "learning" as const,
      groups: ["a"],
      component: "format",
      follow: true,
    };
    const params = writeFilters(filters, new URLSearchParams("sample=12&step=1"));
    expect(params.get("sample")).toBe("12");
    expect(params.get("step")).toBeNull();
    expect(parseFilters(params)).toEqual(filters);
  });

  it("maps errors-only and search to the API's names", () => {
    const query = sampleQuery(1, { ...NO_FILTERS, errorsOnly: true, q: "  two words " });
    expect(query).toEqual({ run: 1, has_error: true, q: "two words" });
  });

  it("asks for samples with at least one turn when only episodes are wanted", () => {
    expect(sampleQuery(1, { ...NO_FILTERS, episodesOnly: true })).toEqual({ run: 1, turns_min: 1 });
    expect(parseFilters(new URLSearchParams("episodes=1")).episodesOnly).toBe(true);
  });
});
