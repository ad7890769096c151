import { act, renderHook } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";

import { useLocalCopy } from "./useLocalCopy";

describe("useLocalCopy", () => {
  it("shows a change at once, before the outside value catches up", () => {
    const onChange = vi.fn();
    const { result } = renderHook(({ value }) => useLocalCopy(value, onChange), {
      initialProps: { value: false },
    });
    act(() => result.current[1](true));
    expect(result.current[0]).toBe(true);
    expect(onChange).toHaveBeenCalledWith(true);
  });

  it("takes a new outside value over the local copy", () => {
    const { result, rerender } = renderHook(({ value }) => useLocalCopy(value, () => undefined), {
      initialProps: { value: "a" },
    });
    act(() => result.current[1]("b"));
    rerender({ value: "c" });
    expect(result.current[0]).toBe("c");
  });
});
