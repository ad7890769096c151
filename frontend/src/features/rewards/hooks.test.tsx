import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { act, renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, renderQueryHook } from "../../test/render";
import { rewardKeys, type RewardVersionSummary } from "./api";
import { useCodeCheck, useSaveRewardVersion } from "./hooks";

function wrapper({ children }: { children: ReactNode }) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return <QueryClientProvider client={client}>{children}</QueryClientProvider>;
}

const problem = {
  line: 1,
  column: 9,
  end_line: 1,
  end_column: 10,
  severity: "error",
  message: "syntax error: '(' was never closed",
};

afterEach(() => vi.unstubAllGlobals());

describe("useCodeCheck", () => {
  it("checks the opened code at once, then the code once typing pauses, not per keystroke", async () => {
    const bodies: string[] = [];
    mockApi({
      "POST /api/reward-checks/": (request: Request) => {
        void request.json().then((body: { code: string }) => bodies.push(body.code));
        return jsonResponse({ ok: false, problems: [problem] });
      },
    });
    const { result, rerender } = renderHook(({ code }) => useCodeCheck(code), {
      wrapper,
      initialProps: { code: "def f(" },
    });
    rerender({ code: "def f(x" });
    rerender({ code: "def f(x," });
    await waitFor(() => expect(result.current.data?.problems).toEqual([problem]));
    await waitFor(() => expect(bodies).toEqual(["def f(", "def f(x,"]));
  });

  it("checks nothing while the code is loading", async () => {
    const fetchMock = mockApi({});
    const { result } = renderHook(() => useCodeCheck(null), { wrapper });
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(result.current.data).toBeUndefined();
    expect(fetchMock).not.toHaveBeenCalled();
  });
});

describe("useSaveRewardVersion", () => {
  it("stores nothing when the check finds problems, and answers them", async () => {
    const fetchMock = mockApi({ "POST /api/reward-checks/": { ok: false, problems: [problem] } });
    const { result } = renderQueryHook(() => useSaveRewardVersion(3));
    const answer = await act(() => result.current.mutateAsync({ code: "def f(", message: "" }));
    expect(answer).toEqual({ ok: false, problems: [problem] });
    expect(fetchMock).toHaveBeenCalledTimes(1); // the check only
  });

  it("caches a saved version at once, first in the list, and refreshes the function", async () => {
    const saved = { id: 30, function: 3, number: 2, code: "def compute_score(): ...", message: "", entrypoint: "compute_score", created_by: "ada", created_at: "2026-01-02T00:00:00Z" };
    mockApi({ "POST /api/reward-checks/": { ok: true, problems: [] }, "POST /api/reward-functions/3/versions/": saved });
    const { result, queryClient } = renderQueryHook(() => useSaveRewardVersion(3));
    const first = { id: 29, number: 1 } as RewardVersionSummary;
    queryClient.setQueryData(rewardKeys.versions(3), [first]);
    queryClient.setQueryData(rewardKeys.detail(3), {});
    await act(() => result.current.mutateAsync({ code: saved.code, message: "" }));
    expect(queryClient.getQueryData(rewardKeys.version(3, 2))).toEqual(saved);
    expect(queryClient.getQueryData<RewardVersionSummary[]>(rewardKeys.versions(3))?.map((v) => v.number)).toEqual([2, 1]);
    expect(queryClient.getQueryState(rewardKeys.detail(3))?.isInvalidated).toBe(true);
  });
});
