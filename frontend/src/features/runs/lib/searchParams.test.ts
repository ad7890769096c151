import { describe, expect, it } from "vitest";

import { runListFilters, runListSearchIn, runTabIn } from "./searchParams";

const params = (query: string) => new URLSearchParams(query);

describe("the run page's tab", () => {
  it("is the one the URL names, or the charts for any other", () => {
    expect(runTabIn(params("tab=logs"))).toBe("logs");
    expect(runTabIn(params("tab=nonsense"))).toBe("charts");
    expect(runTabIn(params(""))).toBe("charts");
  });
});

describe("the runs list's filters", () => {
  it("are read from the URL and make the list query", () => {
    const search = runListSearchIn(params("status=failed&tag=sweep&q=arith&sort=name"));
    expect(search).toEqual({ status: "failed", tag: "sweep", q: "arith", sort: "name" });
    expect(runListFilters(search)).toEqual({ status: ["failed"], tag: "sweep", search: "arith", ordering: "name" });
  });

  it("read an unknown status or sort as no filter and the newest first", () => {
    const search = runListSearchIn(params("status=exploded&sort=-colour"));
    expect(search).toEqual({ status: "", tag: "", q: "", sort: "-created_at" });
    expect(runListFilters(search)).toEqual({ status: undefined, tag: undefined, search: undefined, ordering: "-created_at" });
  });
});
