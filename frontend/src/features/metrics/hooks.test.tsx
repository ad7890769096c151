import { waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, renderQueryHook, requestAt } from "../../test/render";
import { useMetricKeysOf, useSeries } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

describe("useMetricKeysOf", () => {
  it("answers every key any of the runs reported, once each, sorted", async () => {
    mockApi({ "GET /api/runs/1/metrics/keys": { keys: ["loss", "reward"] }, "GET /api/runs/2/metrics/keys": { keys: ["kl", "loss"] } });
    const { result } = renderQueryHook(() => useMetricKeysOf([1, 2]));
    await waitFor(() => expect(result.current.data).toEqual(["kl", "loss", "reward"]));
  });

  it("asks for nothing until enabled", () => {
    const fetchMock = mockApi({});
    renderQueryHook(() => useMetricKeysOf([1, 2], false));
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe("useSeries", () => {
  it("asks for the keys of the charts mounted together in one request", async () => {
    const fetchMock = mockApi({
      "GET /api/metrics/query": (request: Request) => {
        const keys = new URL(request.url).searchParams.get("keys")?.split(",") ?? [];
        return jsonResponse({ series: keys.map((key) => ({ run: 1, key, steps: [1], values: [0.5] })) });
      },
    });
    const request = { runs: [1], range: { min: null, max: null }, times: false, points: 300 };
    const { result } = renderQueryHook(() => ({ reward: useSeries(request, "reward", true), loss: useSeries(request, "loss", true), none: useSeries(request, undefined) }));
    await waitFor(() => expect(result.current.loss.data?.[0]?.key).toBe("loss"));
    expect(result.current.reward.data?.[0]?.key).toBe("reward");
    expect(fetchMock).toHaveBeenCalledTimes(1);
    expect(new URL(requestAt(fetchMock).url).searchParams.get("keys")?.split(",").sort()).toEqual(["loss", "reward"]);
  });
});
