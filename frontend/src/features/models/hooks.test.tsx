import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { FieldErrors } from "../../api/errors";
import { jsonResponse, mockApi } from "../../test/render";
import { listAvailableFolders, modelKeys } from "./api";
import { model, page } from "./fixtures";
import { useAddModel, useAvailableFolders, useModel, useModels } from "./hooks";

function setup() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  const wrapper = ({ children }: { children: ReactNode }) => <QueryClientProvider client={queryClient}>{children}</QueryClientProvider>;
  return { queryClient, wrapper };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe("modelKeys", () => {
  it("nests every key under ['models'] (shared with the run form's picker)", () => {
    expect(modelKeys.list("demo")).toEqual(["models", "list", "demo"]);
    expect(modelKeys.detail(3)).toEqual(["models", "detail", 3]);
    expect(modelKeys.available("demo")[0]).toBe("models");
  });
});

describe("useModels", () => {
  it("reads the project's page of models", async () => {
    const fetchMock = mockApi({ "GET /api/models/": page([model()]) });
    const { wrapper } = setup();
    const { result } = renderHook(() => useModels("demo"), { wrapper });
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    expect(result.current.data?.map((m) => m.name)).toEqual(["tiny-demo"]);
    const url = new URL((fetchMock.mock.calls[0]?.[0] as Request).url);
    expect(url.searchParams.get("project")).toBe("demo");
  });
});

describe("useModel", () => {
  it("polls a downloading model until it is ready", async () => {
    const answers = [
      model({ id: 7, kind: "hub", status: "queued" }),
      model({ id: 7, kind: "hub", status: "downloading", progress: { bytes_done: 1, bytes_total: 2, files_done: 0, files_total: 1 } }),
      model({ id: 7, kind: "hub", status: "ready" }),
    ];
    let call = 0;
    mockApi({ "GET /api/models/7/": () => jsonResponse(answers[Math.min(call++, answers.length - 1)]) });
    const { wrapper } = setup();
    const { result } = renderHook(() => useModel(7), { wrapper });
    await waitFor(() => expect(result.current.data?.status).toBe("ready"), { timeout: 4000 });
    const calls = call;
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect(call).toBe(calls); // no more polling once it is ready
  });

  it("asks for nothing without an id", () => {
    const fetchMock = mockApi({});
    const { wrapper } = setup();
    renderHook(() => useModel(null), { wrapper });
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe("useAvailableFolders", () => {
  it("reads the plain list the server answers, and a page too", async () => {
    mockApi({ "GET /api/models/available/": [{ folder: "demo:tiny", kind: "demo", name: "tiny" }] });
    const { wrapper } = setup();
    const { result } = renderHook(() => useAvailableFolders("demo"), { wrapper });
    await waitFor(() => expect(result.current.data).toEqual([{ folder: "demo:tiny", kind: "demo", name: "tiny" }]));

    mockApi({ "GET /api/models/available/": page([{ folder: "s:a", kind: "server", name: "a" }]) });
    expect(await listAvailableFolders("demo")).toEqual([{ folder: "s:a", kind: "server", name: "a" }]);
  });
});

describe("useAddModel", () => {
  it("posts the body, lists the new model at once and refreshes the models lists", async () => {
    const created = model({ id: 9, name: "hub-model", kind: "hub", status: "queued" });
    const fetchMock = mockApi({ "POST /api/models/": () => jsonResponse(created, 202) });
    const { wrapper, queryClient } = setup();
    queryClient.setQueryData(modelKeys.list("demo"), []);
    const { result } = renderHook(() => useAddModel(), { wrapper });
    await act(() => result.current.mutateAsync({ project: "demo", hub_id: "org/name" }));

    const request = fetchMock.mock.calls[0]?.[0] as Request;
    expect(await request.json()).toEqual({ project: "demo", hub_id: "org/name" });
    expect(queryClient.getQueryState(modelKeys.list("demo"))?.isInvalidated).toBe(true);
    expect(queryClient.getQueryData(modelKeys.list("demo"))).toEqual([created]); // a picker can choose it now
    expect(queryClient.getQueryData(modelKeys.detail(9))).toEqual(created);
  });

  it("throws the server's field errors", async () => {
    mockApi({
      "POST /api/models/": () =>
        jsonResponse({ error: { code: "validation_error", message: "Invalid.", fields: { hub_id: ["Not a hub repository id."] } } }, 400),
    });
    const { wrapper } = setup();
    const { result } = renderHook(() => useAddModel(), { wrapper });
    await act(async () => {
      await result.current.mutateAsync({ project: "demo", hub_id: "bad id" }).catch(() => undefined);
    });
    await waitFor(() => expect(result.current.error).toBeInstanceOf(FieldErrors));
    expect((result.current.error as FieldErrors).at("hub_id")).toEqual(["Not a hub repository id."]);
  });
});
