import { act, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, pageOf, renderQueryHook } from "../../test/render";
import { datasetKeys, type Dataset, type DatasetVersion } from "./api";
import { useCreateDataset, useProjectDatasetVersions, useRefreshDataset } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

const dataset = (id: number) => ({ id, name: `d${id}` }) as Dataset;
const version = (id: number, dataset: number, number: number) => ({ id, number, dataset }) as DatasetVersion;

describe("useProjectDatasetVersions", () => {
  it("asks for every version of the project's datasets at once, and answers them by dataset, newest first", async () => {
    const fetchMock = mockApi({
      "GET /api/datasets/": pageOf([dataset(1), dataset(2)]),
      "GET /api/dataset-versions/": [version(10, 1, 1), version(20, 2, 1), version(12, 1, 3), version(11, 1, 2)],
    });
    const { result } = renderQueryHook(() => useProjectDatasetVersions("demo"));
    await waitFor(() => expect(result.current.versions.get(1)?.length).toBe(3));
    expect(result.current.versions.get(1)?.map((v) => v.number)).toEqual([3, 2, 1]);
    expect(result.current.versions.get(2)?.map((v) => v.id)).toEqual([20]);
    expect(result.current.datasets).toEqual([dataset(1), dataset(2)]);
    const asked = fetchMock.mock.calls.map(([request]) => new URL((request as Request).url));
    expect(asked.map((url) => url.pathname).sort()).toEqual(["/api/dataset-versions/", "/api/datasets/"]);
    expect(asked.find((url) => url.pathname === "/api/dataset-versions/")?.searchParams.get("project")).toBe("demo");
  });
});

describe("useRefreshDataset", () => {
  it("marks the dataset, its versions and the projects' version lists stale", () => {
    const { result, queryClient } = renderQueryHook(() => useRefreshDataset());
    queryClient.setQueryData(datasetKeys.versions(1), []);
    queryClient.setQueryData(datasetKeys.projectVersions("demo"), []);
    result.current(1);
    expect(queryClient.getQueryState(datasetKeys.versions(1))?.isInvalidated).toBe(true);
    expect(queryClient.getQueryState(datasetKeys.projectVersions("demo"))?.isInvalidated).toBe(true);
  });
});

describe("useCreateDataset", () => {
  it("refreshes the project's datasets, and no other project's", async () => {
    mockApi({ "POST /api/datasets/": dataset(2) });
    const { result, queryClient } = renderQueryHook(() => useCreateDataset("demo"));
    queryClient.setQueryData(datasetKeys.list("demo"), []);
    queryClient.setQueryData(datasetKeys.list("other"), []);
    await act(() => result.current.mutateAsync({ name: "d2", description: "" }));
    expect(queryClient.getQueryState(datasetKeys.list("demo"))?.isInvalidated).toBe(true);
    expect(queryClient.getQueryState(datasetKeys.list("other"))?.isInvalidated).toBe(false);
  });
});
