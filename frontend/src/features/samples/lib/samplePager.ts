/**
 * The explorer's list state over the sample API's cursor pages (newest first,
 * ordering -id). The server's cursor is stable while a live run adds samples,
 * so walking `next` never skips or repeats; new samples appear *above* the first
 * page. This state keeps the two apart: older pages append below, newer samples
 * are gathered (possibly over several pages, until they meet the list's top)
 * and then put on top in one go, so the rows a user is reading never shift
 * under a half-loaded gap. Items are de-duplicated by id throughout.
 */

export type Identified = { id: number };
export type CursorPage<T> = { results: T[]; next: string | null };

export type Pager<T extends Identified> = {
  items: T[];
  /** Cursor of the next older page; null once the oldest sample is loaded. */
  next: string | null;
  /** Whether the first page has been loaded. */
  started: boolean;
  /** Newer samples gathered but not yet shown, newest first. */
  pendingNewer: T[];
  /** Cursor to keep gathering newer samples from; null when the gap is closed. */
  newerNext: string | null;
};

export function emptyPager<T extends Identified>(): Pager<T> {
  return { items: [], next: null, started: false, pendingNewer: [], newerNext: null };
}

function topId<T extends Identified>(pager: Pager<T>): number {
  return pager.items.length ? pager.items[0]!.id : Number.NEGATIVE_INFINITY;
}

/** Appends an older page (the first page, or the one `pager.next` pointed at). */
export function withOlderPage<T extends Identified>(pager: Pager<T>, page: CursorPage<T>): Pager<T> {
  const seen = new Set(pager.items.map((item) => item.id));
  const fresh = page.results.filter((item) => !seen.has(item.id));
  return { ...pager, items: [...pager.items, ...fresh], next: page.next, started: true };
}

/**
 * Takes a page read from the top (a fresh first page, or the page `newerNext`
 * pointed at) and gathers the samples newer than the list's top. When the page
 * reaches the known top (or the end), the gathered samples go on top of the
 * list; otherwise `newerNext` says where to keep reading.
 */
export function withNewerPage<T extends Identified>(pager: Pager<T>, page: CursorPage<T>): Pager<T> {
  if (!pager.started) return withOlderPage(pager, page);
  const top = topId(pager);
  const known = new Set(pager.pendingNewer.map((item) => item.id));
  const newer = page.results.filter((item) => item.id > top && !known.has(item.id));
  const gathered = [...pager.pendingNewer, ...newer];
  const reachedTop = newer.length < page.results.length || page.next === null;
  if (!reachedTop) return { ...pager, pendingNewer: gathered, newerNext: page.next };
  return { ...pager, items: [...gathered, ...pager.items], pendingNewer: [], newerNext: null };
}
