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
    expect(search).toEqual({ status: "failed", tag: "sweep", q: "arith", sort: "name", archived: "false" });
    expect(runListFilters(search)).toEqual({ status: ["failed"], tag: "sweep", search: "arith", ordering: "name", archived: undefined });
  });

  it("read an unknown status or sort as no filter and the newest first", () => {
    const search = runListSearchIn(params("status=exploded&sort=-colour"));
    expect(search).toEqual({ status: "", tag: "", q: "", sort: "-created_at", archived: "false" });
    expect(runListFilters(search)).toEqual({ status: undefined, tag: undefined, search: undefined, ordering: "-created_at", archived: undefined });
  });

  it("show archived runs only when the URL asks (an unknown value reads as not archived)", () => {
    expect(runListFilters(runListSearchIn(params("archived=true"))).archived).toBe("true");
    expect(runListFilters(runListSearchIn(params("archived=all"))).archived).toBe("all");
    expect(runListFilters(runListSearchIn(params("archived=maybe"))).archived).toBeUndefined();
  });
});
