import { act } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, renderQueryHook } from "../../test/render";
import { runKeys } from "../runs/api";
import { evaluationKeys, type EvaluationDetail } from "./api";
import { useCancelEvaluation } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

const cancelled = { id: 12, project: "demo", status: "cancelled" } as EvaluationDetail;

describe("an evaluation's cache", () => {
  it("sits under the run it is, so refreshing the run refreshes its results", () => {
    const { queryClient } = renderQueryHook(() => null);
    queryClient.setQueryData(evaluationKeys.detail(12), cancelled);
    void queryClient.invalidateQueries({ queryKey: runKeys.detail(12) });
    expect(queryClient.getQueryState(evaluationKeys.detail(12))?.isInvalidated).toBe(true);
  });

  it("is updated by a cancel, which refreshes the run and the project's lists as well", async () => {
    mockApi({ "POST /api/evaluations/12/cancel/": cancelled });
    const { result, queryClient } = renderQueryHook(() => useCancelEvaluation(12));
    queryClient.setQueryData(runKeys.detail(12), { id: 12, status: "running" });
    queryClient.setQueryData(runKeys.list("demo", {}), { count: 1, results: [] });
    await act(() => result.current.mutateAsync());
    expect(queryClient.getQueryData(evaluationKeys.detail(12))).toEqual(cancelled);
    expect(queryClient.getQueryState(runKeys.detail(12))?.isInvalidated).toBe(true);
    expect(queryClient.getQueryState(runKeys.list("demo", {}))?.isInvalidated).toBe(true);
    // The fresh answer is kept, not asked for again.
    expect(queryClient.getQueryState(evaluationKeys.detail(12))?.isInvalidated).toBe(false);
  });
});
