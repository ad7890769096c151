import { act, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi, pageOf, renderQueryHook, requestAt } from "../../test/render";
import { tokenKeys, type ApiToken } from "./api";
import { useCreateToken, useRevokeToken, useTokens } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

const token = { id: 3, name: "ci", prefix: "rls_ab", scopes: ["read"], created_at: "2026-01-01T00:00:00Z", expires_at: null, last_used_at: null } as unknown as ApiToken;

describe("token hooks", () => {
  it("lists my tokens", async () => {
    mockApi({ "GET /api/tokens/": pageOf([token]) });
    const { result } = renderQueryHook(() => useTokens());
    await waitFor(() => expect(result.current.data).toEqual([token]));
  });

  it("sends a new token's expiry as the API names it, then refreshes the list", async () => {
    const fetchMock = mockApi({ "POST /api/tokens/": { ...token, token: "rls_secret" } });
    const { result, queryClient } = renderQueryHook(() => useCreateToken());
    queryClient.setQueryData(tokenKeys.all, []);
    await act(() => result.current.mutateAsync({ name: "ci", scopes: ["read"], expiresAt: "2027-01-01T00:00:00Z" }));
    expect(await requestAt(fetchMock).json()).toEqual({ name: "ci", scopes: ["read"], expires_at: "2027-01-01T00:00:00Z" });
    expect(queryClient.getQueryState(tokenKeys.all)?.isInvalidated).toBe(true);
  });

  it("refreshes the list after a revoke", async () => {
    mockApi({ "DELETE /api/tokens/3/": () => new Response(null, { status: 204 }) });
    const { result, queryClient } = renderQueryHook(() => useRevokeToken());
    queryClient.setQueryData(tokenKeys.all, [token]);
    await act(() => result.current.mutateAsync(3));
    expect(queryClient.getQueryState(tokenKeys.all)?.isInvalidated).toBe(true);
  });
});
