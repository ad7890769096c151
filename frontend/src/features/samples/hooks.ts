/** Query and mutation hooks of rollout samples (their keys and fetchers live in api.ts). */
import { isCancelledError, keepPreviousData, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useEffect, useRef, useState } from "react";

import { datasetKeys } from "../datasets/api";
import {
  addLabel,
  exportLabelled,
  fetchGroup,
  fetchHistogram,
  fetchLengths,
  fetchPrompts,
  fetchSamplePage,
  fetchSample,
  fetchStepGroups,
  fetchTimeline,
  previewExport,
  removeLabel,
  sampleKeys,
  sampleQueries,
  type ExportRequest,
  type GroupSignal,
  type Sample,
  type SampleQuery,
  type StepSpan,
} from "./api";
import { type CursorPage, emptyPager, type Pager, withNewerPage, withOlderPage } from "./lib/samplePager";

/** How often a live run's steps are re-read (the slider's "follow latest"). */
export const LIVE_REFRESH_MS = 5_000;

export const useSteps = (run: number, live: boolean) =>
  useQuery({ ...sampleQueries.steps(run), refetchInterval: live ? LIVE_REFRESH_MS : false });

export const useSample = (id: number | null) =>
  useQuery({
    queryKey: sampleKeys.detail(id ?? 0),
    queryFn: ({ signal }) => fetchSample(id ?? 0, signal),
    enabled: id !== null,
  });

export const useGroup = (run: number, step: number, groupId: string) =>
  useQuery({
    queryKey: sampleKeys.group(run, step, groupId),
    queryFn: ({ signal }) => fetchGroup(run, step, groupId, signal),
  });

export const useStepGroups = (run: number, step: number | null, filter: GroupSignal) =>
  useQuery({
    queryKey: sampleKeys.stepGroups(run, step ?? -1, filter),
    queryFn: ({ signal }) => fetchStepGroups(run, step ?? 0, filter, signal),
    enabled: step !== null,
  });

export const useTimeline = (run: number | null, sample: number) =>
  useQuery({
    queryKey: sampleKeys.timeline(run ?? 0, sample),
    queryFn: ({ signal }) => fetchTimeline(run ?? 0, sample, signal),
    enabled: run !== null,
  });

/** `enabled: false` holds a new range's request back (the previous range stays shown). */
export const useHistogram = (run: number, steps: StepSpan, enabled = true) =>
  useQuery({
    queryKey: sampleKeys.histogram(run, steps),
    queryFn: ({ signal }) => fetchHistogram(run, steps, signal),
    placeholderData: keepPreviousData,
    enabled,
  });

export const useLengths = (run: number, steps: StepSpan, enabled = true) =>
  useQuery({
    queryKey: sampleKeys.lengths(run, steps),
    queryFn: ({ signal }) => fetchLengths(run, steps, signal),
    placeholderData: keepPreviousData,
    enabled,
  });

export const usePrompts = (run: number, q: string) =>
  useQuery({
    queryKey: sampleKeys.prompts(run, q),
    queryFn: ({ signal }) => fetchPrompts(run, q, signal),
    placeholderData: keepPreviousData,
  });

/** Adds or removes one of your labels; every view holding the sample refreshes. */
export function useLabelToggle() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ sample, label, on }: { sample: number; label: string; on: boolean }) =>
      on ? addLabel(sample, label) : removeLabel(sample, label),
    onSuccess: async () => {
      // A sample's first fetch may still be in flight, having read it before the label
      // landed; invalidating would join that fetch (a query with no data yet is not
      // refetched), so the page would keep the old labels. Cancel it, then refetch.
      await client.cancelQueries({ queryKey: sampleKeys.all });
      await client.invalidateQueries({ queryKey: sampleKeys.all });
    },
  });
}

/** What an export would store (a dry run: nothing is written). */
export const useExportPreview = (run: number) =>
  useMutation({ mutationFn: (request: ExportRequest) => previewExport(run, request) });

/** Exports the labelled samples; the dataset lists refresh (a new dataset, a new version). */
export function useExportLabelled(run: number) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (request: ExportRequest) => exportLabelled(run, request),
    onSuccess: () => client.invalidateQueries({ queryKey: datasetKeys.all }),
  });
}

/**
 * The explorer's sample list: cursor pages loaded as the user scrolls, newer
 * samples gathered while the run is live (see lib/samplePager.ts), restarted
 * whenever the filters change. A request for an outdated filter is aborted and
 * its answer dropped, so a slow old page never lands in a new list.
 */
export type SampleList = {
  pager: Pager<Sample>;
  /** The filters' query (JSON). `pager` answers it, or is empty and not started: the
   * status line names it, so a test can wait for the list of the filters it set. */
  query: string;
  loading: boolean;
  error: Error | null;
  loadMore: () => void;
  refreshNewer: () => void;
  /** Replaces a loaded sample with a fresher copy (e.g. after labelling it). */
  patch: (sample: Sample) => void;
  /** Counts filter changes (list restarts): the status line exposes it for the bench. */
  generation: number;
};

/** Reads one page of the list's samples (the first from the cache, the others afresh). */
type PageLoad = (query: SampleQuery, signal: AbortSignal) => Promise<CursorPage<Sample>>;

const NOT_STARTED: Pager<Sample> = emptyPager();

export function useSampleList(query: SampleQuery, live: boolean, refreshMs = 5_000): SampleList {
  const queryClient = useQueryClient();
  const key = JSON.stringify(query);
  const generation = useRef({ key, controller: new AbortController() });
  // The pager is kept with the query it answers. Until the effect below restarts the
  // list, a render with new filters would otherwise show the old filters' rows as the
  // new ones, ready, for a frame (a test read them, and then an empty list).
  const [listed, setListed] = useState<{ key: string; pager: Pager<Sample> }>(() => ({ key, pager: emptyPager() }));
  const pager = listed.key === key ? listed.pager : NOT_STARTED;
  const setPager = useCallback(
    (update: (old: Pager<Sample>) => Pager<Sample>) =>
      setListed((old) => (old.key === generation.current.key ? { key: old.key, pager: update(old.pager) } : old)),
    [],
  );
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<Error | null>(null);
  const [restarts, setRestarts] = useState(0);
  const busy = useRef(false);
  const pagerRef = useRef(pager);
  pagerRef.current = pager;

  const run = useCallback(
    async (load: PageLoad, merge: typeof withOlderPage<Sample>) => {
      if (busy.current) return;
      busy.current = true;
      const current = generation.current;
      const query = JSON.parse(current.key) as SampleQuery;
      setLoading(true);
      try {
        const page = await load(query, current.controller.signal).catch((cause: unknown) => {
          // Labelling cancels every samples query in flight (see useLabelToggle), the
          // cached first page's too: ask again rather than show a cancellation as an error.
          if (isCancelledError(cause) && generation.current === current && !current.controller.signal.aborted) return load(query, current.controller.signal);
          throw cause;
        });
        if (generation.current !== current) return;
        setPager((old) => merge(old, page));
        setError(null);
      } catch (cause) {
        if (generation.current !== current || current.controller.signal.aborted) return;
        setError(cause instanceof Error ? cause : new Error(String(cause)));
      } finally {
        if (generation.current === current) {
          busy.current = false;
          setLoading(false);
        }
      }
    },
    [setPager],
  );

  // The first page comes through the query cache, where the explorer's route loader may
  // have asked for it already; the cleanup cancels it if the filters change meanwhile.
  useEffect(() => {
    generation.current.controller.abort();
    generation.current = { key, controller: new AbortController() };
    busy.current = false;
    setListed({ key, pager: emptyPager() });
    setError(null);
    setRestarts((n) => n + 1);
    void run((query) => queryClient.fetchQuery(sampleQueries.firstPage(query)), withOlderPage);
    return () => {
      generation.current.controller.abort();
      void queryClient.cancelQueries({ queryKey: sampleKeys.firstPage(JSON.parse(key) as SampleQuery), exact: true });
    };
  }, [key, run, queryClient]);

  const loadMore = useCallback(() => {
    const { next, started } = pagerRef.current;
    if (started && next !== null) void run((query, signal) => fetchSamplePage(query, next, signal), withOlderPage);
  }, [run]);

  const refreshNewer = useCallback(() => {
    const cursor = pagerRef.current.newerNext; // null: the newest page, read afresh
    void run((query, signal) => fetchSamplePage(query, cursor, signal), withNewerPage);
  }, [run]);

  useEffect(() => {
    if (!live) return undefined;
    const timer = setInterval(refreshNewer, refreshMs);
    return () => clearInterval(timer);
  }, [live, refreshMs, refreshNewer]);

  // Keep gathering newer pages until the gap above the list is closed.
  useEffect(() => {
    if (pager.newerNext !== null) refreshNewer();
  }, [pager.newerNext, refreshNewer]);

  const patch = useCallback((sample: Sample) => {
    setPager((old) =>
      old.items.some((item) => item.id === sample.id && item !== sample)
        ? { ...old, items: old.items.map((item) => (item.id === sample.id ? sample : item)) }
        : old,
    );
  }, [setPager]);

  return { pager, query: key, loading, error, loadMore, refreshNewer, patch, generation: restarts };
}

/** The newest page of a run's samples whose reward failed (none asked for unless `enabled`). */
export function useFailingSamples(run: number, enabled: boolean) {
  return useQuery({
    queryKey: sampleKeys.failing(run),
    queryFn: ({ signal }) => fetchSamplePage({ run, has_error: true }, null, signal),
    enabled,
  });
}
