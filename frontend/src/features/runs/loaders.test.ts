import { QueryClient } from "@tanstack/react-query";
import { waitFor } from "@testing-library/react";
import type { LoaderFunctionArgs } from "react-router";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, pageOf } from "../../test/render";
import { metricKeys } from "../metrics/api";
import { runKeys } from "./api";
import { comparePageLoader, runPageLoader, runsPageLoader } from "./loaders";

afterEach(() => vi.unstubAllGlobals());

// global.css's layout properties (jsdom loads no stylesheet): two 504 px slots a row at 1440 px.
const LAYOUT = { "--sidebar-width": "232px", "--content-max-width": "1120px", "--content-padding-x": "40px", "--chart-min-width": "340px", "--chart-gap": "12px", "--chart-cell-inset": "5px" };

const args = (url: string, params: Record<string, string>) => ({ request: new Request(`http://localhost${url}`), params, context: undefined }) as unknown as LoaderFunctionArgs;

describe("the run page's loader", () => {
  it("starts the run and its metric keys under the keys the page reads, and checks the tab", async () => {
    const fetchMock = mockApi({ "GET /api/runs/7/": { id: 7 }, "GET /api/runs/7/metrics/keys": ["loss"] });
    const queryClient = new QueryClient();
    const data = runPageLoader(queryClient)(args("/p/demo/runs/7?tab=bogus", { slug: "demo", runId: "7" }));
    expect(data).toEqual({ tab: "charts" });
    await waitFor(() => expect(queryClient.getQueryData(runKeys.detail(7))).toEqual({ id: 7 }));
    expect(queryClient.getQueryState(metricKeys.keys(7))).toBeDefined();
    expect(fetchMock).toHaveBeenCalled();
  });

  it("asks for nothing the cache holds: a tab change runs it again", () => {
    const fetchMock = mockApi({});
    const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 0 } } });
    queryClient.setQueryData(runKeys.detail(7), { id: 7 });
    queryClient.setQueryData(metricKeys.keys(7), []);
    expect(runPageLoader(queryClient)(args("/p/demo/runs/7?tab=logs", { slug: "demo", runId: "7" }))).toEqual({ tab: "logs" });
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe("the runs list's loader", () => {
  it("starts the list with the URL's filters, the query the page makes", async () => {
    mockApi({ "GET /api/runs/": pageOf([]) });
    const queryClient = new QueryClient();
    const data = runsPageLoader(queryClient)(args("/p/demo/runs?status=failed&sort=name", { slug: "demo" }));
    expect(data.search).toEqual({ status: "failed", tag: "", q: "", sort: "name", archived: "false" });
    const key = runKeys.list("demo", { status: ["failed"], tag: undefined, search: undefined, ordering: "name" });
    await waitFor(() => expect(queryClient.getQueryData(key)).toEqual({ count: 0, results: [] }));
  });
});

describe("the compare page's loader", () => {
  it("starts each run, their metric keys and the config schema, for distinct ids", async () => {
    const fetchMock = mockApi({
      "GET /api/runs/3/": { id: 3 },
      "GET /api/runs/5/": { id: 5 },
      "GET /api/runs/3/metrics/keys": { keys: ["loss"] },
      "GET /api/runs/5/metrics/keys": { keys: ["kl"] },
      "GET /api/config/schema": {},
    });
    const queryClient = new QueryClient();
    const data = comparePageLoader(queryClient)(args("/p/demo/compare?runs=3,5,3,x,-1", { slug: "demo" }));
    expect(data).toEqual({ runs: [3, 5] });
    await waitFor(() => expect(queryClient.getQueryData(runKeys.detail(5))).toEqual({ id: 5 }));
    expect(queryClient.getQueryState(runKeys.detail(3))).toBeDefined();
    await waitFor(() => expect(queryClient.getQueryData(metricKeys.keysOf([3, 5]))).toEqual(["kl", "loss"]));
    expect(queryClient.getQueryState(runKeys.configSchema)).toBeDefined();
    expect(fetchMock).toHaveBeenCalled();
  });

  it("once the keys are in, starts the first two rows of charts' series, in one request, under the keys the charts read", async () => {
    for (const [name, value] of Object.entries(LAYOUT)) document.documentElement.style.setProperty(name, value);
    Object.defineProperty(document.documentElement, "clientWidth", { configurable: true, value: 1440 });
    try {
      const fetchMock = mockApi({
        "GET /api/runs/3/": { id: 3 },
        "GET /api/runs/5/": { id: 5 },
        "GET /api/runs/3/metrics/keys": { keys: ["reward/mean", "actor/kl"] },
        "GET /api/runs/5/metrics/keys": { keys: ["reward/std"] },
        "GET /api/config/schema": {},
        "GET /api/metrics/query": { series: [{ run: 3, key: "reward/mean", steps: [1], values: [0.5], downsampled: false }] },
      });
      const queryClient = new QueryClient();
      comparePageLoader(queryClient)(args("/p/demo/compare?runs=3,5&from=10", { slug: "demo" }));
      const shown = (key: string) => metricKeys.series([3, 5], key, { min: 10, max: null }, false, 900);
      await waitFor(() => expect(queryClient.getQueryData(shown("reward/mean"))).toHaveLength(1));
      expect(queryClient.getQueryData(shown("reward/std"))).toEqual([]);
      expect(queryClient.getQueryData(shown("actor/kl"))).toEqual([]); // the second row
      const queries = fetchMock.mock.calls.map(([request]) => new URL((request as Request).url)).filter((url) => url.pathname === "/api/metrics/query");
      expect(queries.map((url) => Object.fromEntries(url.searchParams))).toEqual([{ runs: "3,5", keys: "reward/mean,reward/std,actor/kl", points: "900", step_min: "10" }]);
    } finally {
      document.documentElement.removeAttribute("style");
      Reflect.deleteProperty(document.documentElement, "clientWidth");
    }
  });

  it("asks for nothing with fewer than two runs (the page asks for a choice)", () => {
    const fetchMock = mockApi({});
    expect(comparePageLoader(new QueryClient())(args("/p/demo/compare?runs=3", { slug: "demo" }))).toEqual({ runs: [3] });
    expect(fetchMock).not.toHaveBeenCalled();
  });
});
