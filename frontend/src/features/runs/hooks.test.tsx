import { act, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, pageOf, renderQueryHook, requestAt } from "../../test/render";
import { metricKeys } from "../metrics/api";
import { runKeys, type RunDetail } from "./api";
import { useLiveRun, useRun, useRunAction, useRuns, useRunsById, useStartRun } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

const run = (id: number) => ({ id, name: `run-${id}`, status: "running" }) as RunDetail;

describe("useRun and useRunsById", () => {
  it("cache a run once, under its detail key, whoever asks", async () => {
    const fetchMock = mockApi({ "GET /api/runs/7/": run(7), "GET /api/runs/8/": run(8) });
    const { result, queryClient } = renderQueryHook(() => ({ one: useRun(7), both: useRunsById([7, 8]) }));
    await waitFor(() => expect(result.current.both.every((q) => q.isSuccess)).toBe(true));
    expect(result.current.one.data).toEqual(run(7));
    expect(queryClient.getQueryData(runKeys.detail(8))).toEqual(run(8));
    expect(fetchMock.mock.calls.map((call) => new URL((call[0] as Request).url).pathname).sort()).toEqual(["/api/runs/7/", "/api/runs/8/"]);
  });
});

describe("useRuns", () => {
  it("sends only the filters that are set", async () => {
    const fetchMock = mockApi({ "GET /api/runs/": pageOf([run(1)]) });
    const { result } = renderQueryHook(() => useRuns("demo", { status: ["failed"], tag: "", ordering: "-created_at" }));
    await waitFor(() => expect(result.current.data?.results).toEqual([run(1)]));
    const query = new URL(requestAt(fetchMock).url).searchParams;
    expect(query.get("project")).toBe("demo");
    expect(query.get("status")).toBe("failed");
    expect(query.get("ordering")).toBe("-created_at");
    expect(query.has("tag")).toBe(false);
  });
});

describe("useRunAction", () => {
  it("cancels, then refreshes the run and every runs list", async () => {
    mockApi({ "POST /api/runs/7/cancel/": {} });
    const { result, queryClient } = renderQueryHook(() => useRunAction(7));
    queryClient.setQueryData(runKeys.detail(7), run(7));
    queryClient.setQueryData(runKeys.list("demo", {}), pageOf([run(7)]));
    queryClient.setQueryData(runKeys.logs(7, ""), []);
    await act(() => result.current.cancel.mutateAsync());
    expect(queryClient.getQueryState(runKeys.detail(7))?.isInvalidated).toBe(true);
    expect(queryClient.getQueryState(runKeys.list("demo", {}))?.isInvalidated).toBe(true);
    expect(queryClient.getQueryState(runKeys.logs(7, ""))?.isInvalidated).toBe(false);
  });
});

describe("useStartRun", () => {
  it("posts a clone to its parent's clone endpoint and caches the new run", async () => {
    const fetchMock = mockApi({ "POST /api/runs/7/clone/": run(9) });
    const { result, queryClient } = renderQueryHook(() => useStartRun());
    await act(() => result.current.mutateAsync({ clone: 7, body: { name: "again" } }));
    expect(new URL(requestAt(fetchMock).url).pathname).toBe("/api/runs/7/clone/");
    expect(queryClient.getQueryData(runKeys.detail(9))).toEqual(run(9));
  });
});

/** The one stream a test opens: its listeners, and a way to send it an event. */
class FakeEventSource {
  static last: FakeEventSource | null = null;
  listeners = new Map<string, (event: MessageEvent<string>) => void>();
  onopen: (() => void) | null = null;
  constructor(public url: string) {
    FakeEventSource.last = this;
  }
  addEventListener(name: string, listener: (event: MessageEvent<string>) => void) {
    this.listeners.set(name, listener);
  }
  removeEventListener(name: string) {
    this.listeners.delete(name);
  }
  close() {}
  send(name: string, data: unknown) {
    this.listeners.get(name)?.(new MessageEvent(name, { data: JSON.stringify(data), lastEventId: "1:0" }));
  }
}

describe("useLiveRun", () => {
  it("shows a live record's new metric keys at once, and still asks for the run's keys", () => {
    vi.stubGlobal("EventSource", FakeEventSource);
    mockApi({ "GET /api/runs/7/metrics/keys": { keys: ["a/b", "val-core/arith/reward/mean@1"] } });
    const seen: number[] = [];
    const { queryClient } = renderQueryHook(() => useLiveRun({ id: 7, status: "running" }, new Set(["a/b"]), { metrics: (r) => seen.push(r.step), log: () => undefined }));
    queryClient.setQueryData(metricKeys.keys(7), ["a/b"]);

    act(() => FakeEventSource.last?.send("metrics", { step: 0, time: 1, values: { "val-core/arith/reward/mean@1": 0.5, "a/b": 1 } }));

    expect(queryClient.getQueryData(metricKeys.keys(7))).toEqual(["a/b", "val-core/arith/reward/mean@1"]);
    expect(seen).toEqual([0]);
    expect(queryClient.getQueryState(metricKeys.keys(7))?.isInvalidated).toBe(true);
  });
});
