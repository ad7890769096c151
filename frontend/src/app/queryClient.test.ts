import type { Query } from "@tanstack/react-query";
import { describe, expect, it } from "vitest";

import { ApiError } from "../api/client";
import { shouldRetry, shouldRetryOnMount } from "./queryClient";

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

describe("shouldRetryOnMount", () => {
  const failed = (error: unknown, errorUpdatedAt: number) =>
    ({ state: { error, errorUpdatedAt } }) as unknown as Pick<Query, "state">;
  const notFound = new ApiError("No run 9.", 404, "not_found");

  it("does not ask again for a 4xx the route's loader has just been answered", () => {
    expect(shouldRetryOnMount(failed(notFound, 10_000), 10_500)).toBe(false);
  });

  it("asks again for an older 4xx, and for a 5xx or a network failure at once", () => {
    expect(shouldRetryOnMount(failed(notFound, 10_000), 12_500)).toBe(true);
    expect(shouldRetryOnMount(failed(new ApiError("The studio answered 502.", 502), 10_000), 10_500)).toBe(true);
    expect(shouldRetryOnMount(failed(new TypeError("fetch failed"), 10_000), 10_500)).toBe(true);
  });
});
