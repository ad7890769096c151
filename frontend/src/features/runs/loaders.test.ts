import { QueryClient } from "@tanstack/react-query";
import { waitFor } from "@testing-library/react";
import type { LoaderFunctionArgs } from "react-router";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, pageOf } from "../../test/render";
import { metricKeys } from "../metrics/api";
import { runKeys } from "./api";
import { runPageLoader, runsPageLoader } from "./loaders";

afterEach(() => vi.unstubAllGlobals());

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
