import { act, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";

import { useNow } from "./useNow";

describe("useNow", () => {
  beforeEach(() => vi.useFakeTimers({ now: 1_000_000 }));
  afterEach(() => vi.useRealTimers());

  it("ticks every second while ticking, and stops when told", () => {
    const { result, rerender } = renderHook(({ ticking }) => useNow(ticking), { initialProps: { ticking: true } });
    expect(result.current).toBe(1_000_000);
    act(() => void vi.advanceTimersByTime(3000));
    expect(result.current).toBe(1_003_000);
    rerender({ ticking: false });
    act(() => void vi.advanceTimersByTime(5000));
    expect(result.current).toBe(1_003_000);
  });
});
