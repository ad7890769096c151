import { type CursorPage, emptyPager, type Pager, withNewerPage, withOlderPage } from "./samplePager";

type Row = { id: number };

/**
 * A stand-in for the sample API's cursor (ordering -id): a cursor is the id to
 * continue below, as DRF's CursorPagination behaves for a unique ordering.
 */
class FakeSampleApi {
  ids: number[] = [];
  constructor(count: number) {
    for (let id = 1; id <= count; id += 1) this.ids.push(id);
  }
  add(count: number) {
    const last = this.ids[this.ids.length - 1] ?? 0;
    for (let i = 1; i <= count; i += 1) this.ids.push(last + i);
  }
  page(cursor: string | null, size: number): CursorPage<Row> {
    const below = cursor === null ? Number.POSITIVE_INFINITY : Number(cursor);
    const rows = this.ids
      .filter((id) => id < below)
      .sort((a, b) => b - a)
      .slice(0, size)
      .map((id) => ({ id }));
    const last = rows[rows.length - 1];
    const more = last !== undefined && this.ids.some((id) => id < last.id);
    return { results: rows, next: more && last ? String(last.id) : null };
  }
}

function loadAll(api: FakeSampleApi, pager: Pager<Row>, size: number, onEachPage: () => void) {
  let state = withOlderPage(pager, api.page(null, size));
  while (state.next !== null) {
    onEachPage();
    state = withOlderPage(state, api.page(state.next, size));
  }
  return state;
}

describe("the explorer's sample pager", () => {
  it("walks every sample once, newest first, while new samples arrive", () => {
    const api = new FakeSampleApi(95);
    const state = loadAll(api, emptyPager<Row>(), 10, () => api.add(3));
    const ids = state.items.map((row) => row.id);
    expect(ids).toEqual(Array.from({ length: 95 }, (_, i) => 95 - i));
  });

  it("puts newer samples on top without gaps or repeats, over several pages", () => {
    const api = new FakeSampleApi(30);
    let state = withOlderPage(emptyPager<Row>(), api.page(null, 10));
    api.add(25); // more than one page arrived while the user read the first
    state = withNewerPage(state, api.page(null, 10));
    expect(state.items.map((r) => r.id)[0]).toBe(30); // nothing shown until the gap closes
    expect(state.newerNext).not.toBeNull();
    while (state.newerNext !== null) state = withNewerPage(state, api.page(state.newerNext, 10));
    while (state.next !== null) state = withOlderPage(state, api.page(state.next, 10));
    const ids = state.items.map((row) => row.id);
    expect(ids).toEqual(Array.from({ length: 55 }, (_, i) => 55 - i));
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("changes nothing when a refresh finds no newer samples", () => {
    const api = new FakeSampleApi(12);
    const state = withOlderPage(emptyPager<Row>(), api.page(null, 5));
    const again = withNewerPage(state, api.page(null, 5));
    expect(again.items).toEqual(state.items);
    expect(again.pendingNewer).toEqual([]);
  });

  it("drops a repeated row if a page overlaps what is loaded", () => {
    const state = withOlderPage(emptyPager<Row>(), { results: [{ id: 5 }, { id: 4 }], next: "4" });
    const next = withOlderPage(state, { results: [{ id: 4 }, { id: 3 }], next: null });
    expect(next.items.map((r) => r.id)).toEqual([5, 4, 3]);
    expect(next.next).toBeNull();
  });
});
