/** Query hooks of the dataset pages (their keys and fetchers live in api.ts). */
import { keepPreviousData, useQuery } from "@tanstack/react-query";

import { datasetKeys, getDiff, type DiffQuery } from "./api";

/** A page of the diff of two versions; the last page stays while the next loads. */
export function useVersionDiff(datasetId: number, query: DiffQuery | null) {
  return useQuery({
    queryKey: datasetKeys.diff(datasetId, query ?? { from: 0, to: 0, offset: 0, limit: 0 }),
    queryFn: ({ signal }) => getDiff(datasetId, query as DiffQuery, signal),
    enabled: query !== null,
    placeholderData: keepPreviousData,
    staleTime: Infinity, // versions never change
  });
}
