import { QueryClient } from "@tanstack/react-query";
import { waitFor } from "@testing-library/react";
import type { LoaderFunctionArgs } from "react-router";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, requestAt } from "../../test/render";
import { runKeys } from "../runs/api";
import { sampleKeys } from "../samples/api";
import { explorerPageLoader } from "./loaders";

afterEach(() => vi.unstubAllGlobals());

const args = (url: string, params: Record<string, string>) => ({ request: new Request(`http://localhost${url}`), params, context: undefined }) as unknown as LoaderFunctionArgs;
const firstPage = { results: [{ id: 9, step: 4 }], next: null };

describe("the explorer's loader", () => {
  it("starts the first page of the URL's filters, under the key the sample list reads, then the run", async () => {
    const fetchMock = mockApi({ "GET /api/samples/": firstPage, "GET /api/runs/7/": { id: 7 } });
    const queryClient = new QueryClient();
    explorerPageLoader(queryClient)(args("/p/demo/runs/7/rollouts?steps=3-5&label=good&sample=9", { slug: "demo", runId: "7" }));
    const key = sampleKeys.firstPage({ run: 7, step_min: 3, step_max: 5, label: "good" });
    await waitFor(() => expect(queryClient.getQueryData(key)).toEqual(firstPage));
    await waitFor(() => expect(queryClient.getQueryData(runKeys.detail(7))).toEqual({ id: 7 }));
    const asked = new URL(requestAt(fetchMock, 0).url);
    expect(asked.pathname).toBe("/api/samples/");
    expect(Object.fromEntries(asked.searchParams)).toEqual({ run: "7", step_min: "3", step_max: "5", label: "good", page_size: "100" });
  });

  it("asks for nothing the cache holds: selecting a sample runs it again", () => {
    const fetchMock = mockApi({});
    const queryClient = new QueryClient({ defaultOptions: { queries: { staleTime: 0 } } });
    queryClient.setQueryData(sampleKeys.firstPage({ run: 7 }), firstPage);
    queryClient.setQueryData(runKeys.detail(7), { id: 7 });
    explorerPageLoader(queryClient)(args("/p/demo/runs/7/rollouts?sample=9", { slug: "demo", runId: "7" }));
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it("leaves the first page to the page while it follows the newest step (its range moves first)", async () => {
    const fetchMock = mockApi({ "GET /api/runs/7/": { id: 7 } });
    const queryClient = new QueryClient();
    explorerPageLoader(queryClient)(args("/p/demo/runs/7/rollouts?follow=1", { slug: "demo", runId: "7" }));
    await waitFor(() => expect(queryClient.getQueryData(runKeys.detail(7))).toEqual({ id: 7 }));
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it("asks for nothing for a run id that is not one", () => {
    const fetchMock = mockApi({});
    expect(explorerPageLoader(new QueryClient())(args("/p/demo/runs/x/rollouts", { slug: "demo", runId: "x" }))).toBeNull();
    expect(fetchMock).not.toHaveBeenCalled();
  });
});
