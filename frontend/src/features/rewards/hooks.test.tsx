import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { renderHook, waitFor } from "@testing-library/react";
import type { ReactNode } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi } from "../../test/render";
import { useCodeCheck } from "./hooks";

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
