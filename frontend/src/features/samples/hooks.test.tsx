import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, renderQueryHook, requestAt } from "../../test/render";
import { datasetKeys } from "../datasets/api";
import { sampleKeys, sampleQueries, type Sample } from "./api";
import { useExportLabelled, useLabelToggle, useSample, useSampleList } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

const sample = (id: number) => ({ id, step: 1 }) as Sample;

describe("useLabelToggle", () => {
  it("adds a label, removes it, and refreshes every view of samples", async () => {
    const fetchMock = mockApi({ "POST /api/samples/5/labels/": {}, "DELETE /api/samples/5/labels/": () => new Response(null, { status: 204 }) });
    const { result, queryClient } = renderQueryHook(() => useLabelToggle());
    queryClient.setQueryData(sampleKeys.detail(5), sample(5));
    queryClient.setQueryData(sampleKeys.group(1, 1, "g"), {});
    await act(() => result.current.mutateAsync({ sample: 5, label: "good", on: true }));
    await act(() => result.current.mutateAsync({ sample: 5, label: "good", on: false }));
    expect(requestAt(fetchMock, 0).method).toBe("POST");
    expect(new URL(requestAt(fetchMock, 1).url).searchParams.get("label")).toBe("good");
    expect(queryClient.getQueryState(sampleKeys.detail(5))?.isInvalidated).toBe(true);
    expect(queryClient.getQueryState(sampleKeys.group(1, 1, "g"))?.isInvalidated).toBe(true);
  });
});

describe("useLabelToggle after a fresh selection", () => {
  it("shows the label even when the sample's first fetch started before the label landed", async () => {
    let answerFirst: (response: Response) => void = () => undefined;
    let gets = 0;
    let labelled = false;
    mockApi({
      "POST /api/samples/5/labels/": () => {
        labelled = true;
        return jsonResponse({}, 201);
      },
      "GET /api/samples/5/": () => {
        gets += 1;
        const body = { id: 5, step: 1, labels: labelled ? [{ id: 1, label: "good", author: "ada" }] : [] };
        if (gets > 1) return jsonResponse(body);
        // The first fetch read the sample before the label: it answers late, without it.
        return new Promise<Response>((resolve) => (answerFirst = resolve)) as unknown as Response;
      },
    });
    const { result } = renderQueryHook(() => ({ toggle: useLabelToggle(), detail: useSample(5) }));
    await waitFor(() => expect(gets).toBe(1));
    await act(() => result.current.toggle.mutateAsync({ sample: 5, label: "good", on: true }));
    answerFirst(jsonResponse({ id: 5, step: 1, labels: [] }));
    await waitFor(() => expect(result.current.detail.data?.labels.map((l) => l.label)).toEqual(["good"]));
  });
});

describe("useExportLabelled", () => {
  it("refreshes the dataset lists (a new dataset or version)", async () => {
    mockApi({ "POST /api/runs/1/export-labelled": { dataset: 2, number: 1 } });
    const { result, queryClient } = renderQueryHook(() => useExportLabelled(1));
    queryClient.setQueryData(datasetKeys.list("demo"), []);
    await act(() => result.current.mutateAsync({ new_dataset: "good ones", label: "good" }));
    expect(queryClient.getQueryState(datasetKeys.list("demo"))?.isInvalidated).toBe(true);
  });
});

describe("useSampleList", () => {
  it("loads the first page, then the next one from its cursor", async () => {
    const fetchMock = mockApi({
      "GET /api/samples/": (request: Request) =>
        new URL(request.url).searchParams.get("cursor") === "c2"
          ? jsonResponse({ results: [sample(1)], next: null })
          : jsonResponse({ results: [sample(3), sample(2)], next: "http://localhost/api/samples/?cursor=c2&run=1" }),
    });
    const { result } = renderQueryHook(() => useSampleList({ run: 1 }, false));
    await waitFor(() => expect(result.current.pager.items.map((s) => s.id)).toEqual([3, 2]));
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.pager.items.map((s) => s.id)).toEqual([3, 2, 1]));
    expect(new URL(requestAt(fetchMock, 0).url).searchParams.get("run")).toBe("1");
  });
});

describe("useSampleList when the filters change", () => {
  it("never shows the old filters' rows as the new filters' list, not even for one render", async () => {
    let answerSecond: (response: Response) => void = () => undefined;
    mockApi({
      "GET /api/samples/": (request: Request) =>
        new URL(request.url).searchParams.get("step_max") === "4"
          ? (new Promise<Response>((resolve) => (answerSecond = resolve)) as unknown as Response)
          : jsonResponse({ results: [sample(3), sample(2)], next: null }),
    });
    const seen: { query: string; started: boolean; ids: number[] }[] = [];
    const { result, rerender } = renderQueryHook(
      ({ stepMax }: { stepMax: number | null }) => {
        const list = useSampleList(stepMax === null ? { run: 1 } : { run: 1, step_max: stepMax }, false);
        seen.push({ query: list.query, started: list.pager.started, ids: list.pager.items.map((s) => s.id) });
        return list;
      },
      { stepMax: null as number | null },
    );
    await waitFor(() => expect(result.current.pager.items.map((s) => s.id)).toEqual([3, 2]));
    rerender({ stepMax: 4 });
    const newer = JSON.stringify({ run: 1, step_max: 4 });
    // Every render for the new filters, from the very first, is "not started", with no rows.
    await waitFor(() => expect(seen.some((r) => r.query === newer)).toBe(true));
    expect(seen.filter((r) => r.query === newer).every((r) => !r.started && r.ids.length === 0)).toBe(true);
    answerSecond(jsonResponse({ results: [sample(9)], next: null }));
    await waitFor(() => expect(result.current.pager.items.map((s) => s.id)).toEqual([9]));
    expect(result.current.query).toBe(newer);
  });
});

describe("useSampleList's first page", () => {
  const withCache = (queryClient: QueryClient) =>
    function Wrapper({ children }: { children: ReactNode }) {
      return <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>;
    };

  it("is the one its route loader put in the cache: no second request", async () => {
    const fetchMock = mockApi({});
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    queryClient.setQueryData(sampleKeys.firstPage({ run: 1, label: "good" }), { results: [sample(3)], next: null });
    const { result } = renderHook(() => useSampleList({ run: 1, label: "good" }, false), { wrapper: withCache(queryClient) });
    await waitFor(() => expect(result.current.pager.items.map((s) => s.id)).toEqual([3]));
    expect(fetchMock).not.toHaveBeenCalled();
  });

  it("joins the loader's request while it is in flight", async () => {
    let answer: (response: Response) => void = () => undefined;
    const fetchMock = mockApi({ "GET /api/samples/": () => new Promise<Response>((resolve) => (answer = resolve)) as unknown as Response });
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    void queryClient.prefetchQuery(sampleQueries.firstPage({ run: 1 }));
    const { result } = renderHook(() => useSampleList({ run: 1 }, false), { wrapper: withCache(queryClient) });
    await waitFor(() => expect(fetchMock).toHaveBeenCalled());
    answer(jsonResponse({ results: [sample(4)], next: null }));
    await waitFor(() => expect(result.current.pager.items.map((s) => s.id)).toEqual([4]));
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it("is read afresh once older than the cache's stale time (a later visit)", async () => {
    const fetchMock = mockApi({ "GET /api/samples/": { results: [sample(5)], next: null } });
    const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    queryClient.setQueryData(sampleKeys.firstPage({ run: 1 }), { results: [sample(3)], next: null }, { updatedAt: Date.now() - 60_000 });
    const { result } = renderHook(() => useSampleList({ run: 1 }, false), { wrapper: withCache(queryClient) });
    await waitFor(() => expect(result.current.pager.items.map((s) => s.id)).toEqual([5]));
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });
});

describe("useSampleList while a label lands", () => {
  it("asks again for a first page that labelling cancelled, and shows no error", async () => {
    let gets = 0;
    let answerFirst: (response: Response) => void = () => undefined;
    mockApi({
      "POST /api/samples/3/labels/": {},
      "GET /api/samples/": () => {
        gets += 1;
        if (gets > 1) return jsonResponse({ results: [sample(3)], next: null });
        return new Promise<Response>((resolve) => (answerFirst = resolve)) as unknown as Response;
      },
    });
    const { result } = renderQueryHook(() => ({ list: useSampleList({ run: 1 }, false), toggle: useLabelToggle() }));
    await waitFor(() => expect(gets).toBe(1));
    await act(() => result.current.toggle.mutateAsync({ sample: 3, label: "good", on: true }));
    answerFirst(jsonResponse({ results: [], next: null }));
    await waitFor(() => expect(result.current.list.pager.items.map((s) => s.id)).toEqual([3]));
    expect(result.current.list.error).toBeNull();
  });
});
