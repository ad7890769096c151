import type { FetchQueryOptions, QueryClient } from "@tanstack/react-query";
import type { LoaderFunctionArgs } from "react-router";

/**
 * For route loaders: fetch what the cache lacks (or holds invalidated), never refresh what
 * it holds. The page's hooks refresh what they show by their own stale times; a loader
 * runs again on every change of the URL's search and must not ask twice.
 */
export const IF_MISSING = { staleTime: Infinity } as const;

/**
 * The loader of a project page whose first screen is its lists (`/p/:slug/datasets`):
 * starts them at navigation, beside the session and the projects, instead of once the
 * page renders after both.
 */
export function projectListsLoader(queryClient: QueryClient, ...lists: ((slug: string) => FetchQueryOptions<any, any, any, any>)[]) {
  return ({ params }: LoaderFunctionArgs): null => {
    const slug = params.slug;
    if (slug) for (const list of lists) void queryClient.prefetchQuery({ ...list(slug), ...IF_MISSING });
    return null;
  };
}
