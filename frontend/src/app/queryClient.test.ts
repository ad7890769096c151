import { describe, expect, it } from "vitest";

import { ApiError } from "../api/client";
import { shouldRetry } from "./queryClient";

describe("shouldRetry", () => {
  it("never retries a 4xx: the page shows not found at once", () => {
    expect(shouldRetry(0, new ApiError("No run 9.", 404, "not_found"))).toBe(false);
    expect(shouldRetry(0, new ApiError("Forbidden.", 403))).toBe(false);
  });

  it("retries a 5xx or a network failure three times", () => {
    expect(shouldRetry(0, new ApiError("The studio answered 502.", 502))).toBe(true);
    expect(shouldRetry(2, new ApiError("The studio did not answer", null))).toBe(true);
    expect(shouldRetry(3, new TypeError("fetch failed"))).toBe(false);
  });
});
