/**
 * The run pages' search parameters, read once and checked: a value the page does not know
 * (a stale link, a hand-edited URL) reads as the default rather than reaching a query or a
 * tab that does not exist. The route loaders parse them (and prefetch with them); the pages
 * read the loader's answer, so both ask for the same cache entry.
 */
import { ALL_STATUSES, type ArchivedFilter, type Ordering, type RunFilters, type RunStatus } from "../api";

export const RUN_TABS = ["charts", "samples", "logs", "checkpoints", "alerts", "config", "timeline"] as const;
export type RunTab = (typeof RUN_TABS)[number];

const SORT_KEYS = ["created_at", "priority", "name", "status", "started_at", "finished_at"] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export const DEFAULT_SORT: Ordering = "-created_at";

function oneOf<T extends string>(allowed: readonly T[], value: string | null): T | null {
  return allowed.find((a) => a === value) ?? null;
}

/** `?tab=` of the run page: one of its tabs, else the charts. */
export function runTabIn(params: URLSearchParams): RunTab {
  return oneOf(RUN_TABS, params.get("tab")) ?? "charts";
}

const ARCHIVED = ["false", "true", "all"] as const satisfies readonly ArchivedFilter[];

/** The runs list's filters as the URL holds them: `status`, `tag`, `q` (name contains), `sort` (`-` for descending), `archived` (`true`: archived runs only, `all`; absent: runs not archived). */
export type RunListSearch = { status: RunStatus | ""; tag: string; q: string; sort: Ordering; archived: ArchivedFilter };

export function runListSearchIn(params: URLSearchParams): RunListSearch {
  const sort = params.get("sort") ?? "";
  const sortKey = oneOf(SORT_KEYS, sort.replace(/^-/, ""));
  return {
    status: oneOf(ALL_STATUSES, params.get("status")) ?? "",
    tag: params.get("tag") ?? "",
    q: params.get("q") ?? "",
    sort: sortKey ? ((sort.startsWith("-") ? `-${sortKey}` : sortKey) as Ordering) : DEFAULT_SORT,
    archived: oneOf(ARCHIVED, params.get("archived")) ?? "false",
  };
}

/** The list query those filters make (absent ones do not filter; part of the query key). */
export function runListFilters(search: RunListSearch): RunFilters {
  return {
    status: search.status ? [search.status] : undefined,
    tag: search.tag || undefined,
    search: search.q || undefined,
    ordering: search.sort,
    archived: search.archived === "false" ? undefined : search.archived,
  };
}

/** The compare page's most runs. */
export const MAX_COMPARED = 8;

/** `?runs=` of the compare page: distinct positive ids, at most `MAX_COMPARED`, in order. */
export function comparedRunsIn(params: URLSearchParams): number[] {
  const ids = (params.get("runs") ?? "").split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0);
  return [...new Set(ids)].slice(0, MAX_COMPARED);
}
