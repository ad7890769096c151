import { queryOptions } from "@tanstack/react-query";

import { ApiError, api, unwrap, type Schemas } from "../../api/client";

export type User = Schemas["User"];

export const authKeys = { me: ["auth", "me"] as const };

/** The signed-in user, or null when nobody is (401/403). */
export async function fetchMe(signal?: AbortSignal): Promise<User | null> {
  try {
    return await unwrap(api.GET("/api/auth/me", { signal }));
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) return null;
    throw error;
  }
}

export function signIn(username: string, password: string): Promise<User> {
  return unwrap(api.POST("/api/auth/login", { body: { username, password } }));
}

export async function signOut(): Promise<void> {
  await unwrap(api.POST("/api/auth/logout"));
}

export const authQueries = {
  me: () => queryOptions({ queryKey: authKeys.me, queryFn: ({ signal }) => fetchMe(signal), staleTime: 60_000, retry: false }),
};
