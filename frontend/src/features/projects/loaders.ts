import type { QueryClient } from "@tanstack/react-query";

import { IF_MISSING } from "../../lib/prefetch";
import { projectQueries } from "./api";

/**
 * `/p/:slug/*`: the user's projects (ProjectLayout checks the slug against them), asked
 * for at navigation beside the session and the page's data, not after the session is
 * known. Signed out, the answer is a refusal nobody reads: RequireAuth sends the user
 * to sign in, and signing in clears the cache.
 */
export function projectLoader(queryClient: QueryClient) {
  return (): null => {
    void queryClient.prefetchQuery({ ...projectQueries.all(), ...IF_MISSING });
    return null;
  };
}
