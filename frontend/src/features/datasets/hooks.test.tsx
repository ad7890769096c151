import { act, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, pageOf, renderQueryHook } from "../../test/render";
import { datasetKeys, type Dataset, type DatasetVersion } from "./api";
import { useCreateDataset, useProjectDatasetVersions } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

const dataset = (id: number) => ({ id, name: `d${id}` }) as Dataset;
const version = (id: number, number: number) => ({ id, number, dataset: 1 }) as DatasetVersion;

describe("useProjectDatasetVersions", () => {
  it("answers each dataset's versions, newest first", async () => {
    mockApi({ "GET /api/datasets/": pageOf([dataset(1)]), "GET /api/datasets/1/versions/": [version(10, 1), version(12, 3), version(11, 2)] });
    const { result } = renderQueryHook(() => useProjectDatasetVersions("demo"));
    await waitFor(() => expect(result.current.versions.get(1)?.length).toBe(3));
    expect(result.current.versions.get(1)?.map((v) => v.number)).toEqual([3, 2, 1]);
    expect(result.current.datasets).toEqual([dataset(1)]);
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
