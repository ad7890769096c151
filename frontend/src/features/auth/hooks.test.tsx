import { act, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi, renderQueryHook, testUser } from "../../test/render";
import { projectKeys } from "../projects/api";
import { authKeys } from "./api";
import { useMe, useSignIn, useSignOut } from "./hooks";

afterEach(() => vi.unstubAllGlobals());

describe("useMe", () => {
  it("answers the signed-in user", async () => {
    mockApi({ "GET /api/auth/me": testUser });
    const { result } = renderQueryHook(() => useMe());
    await waitFor(() => expect(result.current.data).toEqual(testUser));
  });

  it("answers null, not an error, when nobody is signed in", async () => {
    mockApi({ "GET /api/auth/me": () => jsonResponse({ error: { code: "not_authenticated", message: "Sign in." } }, 403) });
    const { result } = renderQueryHook(() => useMe());
    await waitFor(() => expect(result.current.isSuccess).toBe(true));
    expect(result.current.data).toBeNull();
  });
});

describe("useSignIn and useSignOut", () => {
  it("drops what the previous session cached and caches who signed in", async () => {
    mockApi({ "POST /api/auth/login": testUser, "POST /api/auth/logout": () => new Response(null, { status: 204 }) });
    const { result, queryClient } = renderQueryHook(() => ({ signIn: useSignIn(), signOut: useSignOut() }));
    queryClient.setQueryData(projectKeys.all, []);
    await act(() => result.current.signIn.mutateAsync({ username: "ada", password: "pw" }));
    expect(queryClient.getQueryData(projectKeys.all)).toBeUndefined();
    expect(queryClient.getQueryData(authKeys.me)).toEqual(testUser);

    await act(() => result.current.signOut.mutateAsync());
    expect(queryClient.getQueryData(authKeys.me)).toBeNull();
  });
});
