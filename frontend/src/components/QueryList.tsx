import type { ReactNode } from "react";

import { ErrorState } from "./ErrorState";
import { Loading } from "./Spinner";

type ListQuery<T> = { isPending: boolean; isError: boolean; error: Error | null; data: readonly T[] | undefined; refetch: () => unknown };

type QueryListProps<T> = {
  query: ListQuery<T>;
  /** What is loading ("the checkpoints"). */
  what: string;
  /** The error's title ("Could not load the checkpoints"). */
  failed: string;
  /** What an empty list shows. */
  empty: ReactNode;
  children: (rows: readonly T[]) => ReactNode;
};

/** A list query's four states, the same everywhere: loading, failed (with a retry), empty, its rows. */
export function QueryList<T>({ query, what, failed, empty, children }: QueryListProps<T>) {
  if (query.isPending) return <Loading what={what} />;
  if (query.isError) return <ErrorState title={failed} error={query.error} onRetry={() => void query.refetch()} />;
  if (!query.data?.length) return <>{empty}</>;
  return <>{children(query.data)}</>;
}
