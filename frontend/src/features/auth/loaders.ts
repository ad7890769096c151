import type { QueryClient } from "@tanstack/react-query";

import { IF_MISSING } from "../../lib/prefetch";
import { authQueries } from "./api";

/**
 * The app's root route (every signed-in page): asks who is signed in at navigation,
 * beside the page's own loader, rather than once the app's first render reaches
 * RequireAuth.
 */
export function sessionLoader(queryClient: QueryClient) {
  return (): null => {
    void queryClient.prefetchQuery({ ...authQueries.me(), ...IF_MISSING });
    return null;
  };
}
