/**
 * The explorer's sample list: cursor pages loaded as the user scrolls, newer
 * samples gathered while the run is live (see lib/samplePager.ts), restarted
 * whenever the filters change. A request for an outdated filter is aborted and
 * its answer dropped, so a slow old page never lands in a new list.
 */
import { useCallback, useEffect, useRef, useState } from "react";

import { fetchSamplePage, type Sample } from "./api";
import type { SampleQuery } from "./lib/explorerQuery";
import { emptyPager, type Pager, withNewerPage, withOlderPage } from "./lib/samplePager";

export type SampleList = {
  pager: Pager<Sample>;
  loading: boolean;
  error: Error | null;
  loadMore: () => void;
  refreshNewer: () => void;
  /** Replaces a loaded sample with a fresher copy (e.g. after labelling it). */
  patch: (sample: Sample) => void;
  /** Counts filter changes (list restarts): the status line exposes it for the bench. */
  generation: number;
};

export function useSampleList(query: SampleQuery, live: boolean, refreshMs = 5_000): SampleList {
  const key = JSON.stringify(query);
  const [pager, setPager] = useState<Pager<Sample>>(emptyPager);
  const [loading, setLoading] = useState(true);
  const [error, setError] = useState<Error | null>(null);
  const [restarts, setRestarts] = useState(0);
  const generation = useRef({ key, controller: new AbortController() });
  const busy = useRef(false);
  const pagerRef = useRef(pager);
  pagerRef.current = pager;

  const run = useCallback(
    async (cursor: string | null, merge: typeof withOlderPage<Sample>) => {
      if (busy.current) return;
      busy.current = true;
      const current = generation.current;
      setLoading(true);
      try {
        const page = await fetchSamplePage(JSON.parse(current.key), cursor, current.controller.signal);
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
    [],
  );

  useEffect(() => {
    generation.current.controller.abort();
    generation.current = { key, controller: new AbortController() };
    busy.current = false;
    setPager(emptyPager());
    setError(null);
    setRestarts((n) => n + 1);
    void run(null, withOlderPage);
    return () => generation.current.controller.abort();
  }, [key, run]);

  const loadMore = useCallback(() => {
    const { next, started } = pagerRef.current;
    if (started && next !== null) void run(next, withOlderPage);
  }, [run]);

  const refreshNewer = useCallback(() => {
    void run(pagerRef.current.newerNext, withNewerPage);
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
  }, []);

  return { pager, loading, error, loadMore, refreshNewer, patch, generation: restarts };
}
