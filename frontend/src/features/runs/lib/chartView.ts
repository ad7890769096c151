/**
 * The chart grid's view as the URL states it (`from`, `to`, `charts`, `axis`), and the
 * series its first rows ask for: read by the grid, and by the compare page's loader, which
 * asks for those rows before the page renders (same query keys, so the charts find them).
 */
import type { StepRange } from "../../metrics/api";
import type { SeriesShape } from "../../metrics/lib/seriesBatcher";
import { groupKeys, pointsForWidth, type XAxis } from "./chartData";

export function rangeIn(params: URLSearchParams): StepRange {
  const number = (name: string) => {
    const raw = params.get(name);
    return raw !== null && raw !== "" && Number.isFinite(Number(raw)) ? Number(raw) : null;
  };
  return { min: number("from"), max: number("to") };
}

/** The keys whose charts are shown: those of `keys` that `?charts=` names, else all. */
export function chosenCharts(chartsParam: string | null, keys: string[]): string[] {
  return chartsParam ? chartsParam.split(",").filter((k) => keys.includes(k)) : keys;
}

export function axisIn(params: URLSearchParams): XAxis {
  return params.get("axis") === "time" ? "time" : "step";
}

/** The grid's layout, as the stylesheets declare it (global.css's custom properties). */
type GridLayout = { sidebar: number; contentMax: number; contentPadding: number; chartMin: number; chartGap: number; cellInset: number };

/** Below this window width the shell stacks its sidebar (AppShell.module.css's breakpoint). */
const NARROW_SHELL_MAX = 760;

function layoutOf(root: HTMLElement): GridLayout | null {
  const style = getComputedStyle(root);
  const px = (name: string) => Number.parseFloat(style.getPropertyValue(name));
  const layout = {
    sidebar: px("--sidebar-width"),
    contentMax: px("--content-max-width"),
    contentPadding: px("--content-padding-x"),
    chartMin: px("--chart-min-width"),
    chartGap: px("--chart-gap"),
    cellInset: px("--chart-cell-inset"),
  };
  return Object.values(layout).every(Number.isFinite) ? layout : null;
}

/**
 * The grid's columns and a chart slot's width in a window `windowWidth` CSS pixels wide
 * (what LazyMount measures once the page is laid out); null where the layout is unknown
 * (the stylesheet not loaded) or the narrow shell's.
 */
export function chartColumns(windowWidth: number, root: HTMLElement = document.documentElement): { columns: number; slotWidth: number } | null {
  const layout = layoutOf(root);
  if (!layout || windowWidth <= NARROW_SHELL_MAX) return null;
  const content = Math.min(windowWidth - layout.sidebar, layout.contentMax) - 2 * layout.contentPadding;
  // grid-template-columns: repeat(auto-fill, minmax(var(--chart-min-width), 1fr))
  const columns = Math.max(1, Math.floor((content + layout.chartGap) / (layout.chartMin + layout.chartGap)));
  const cell = (content - (columns - 1) * layout.chartGap) / columns;
  return { columns, slotWidth: cell - 2 * layout.cellInset };
}

/**
 * Rows of charts a first screen shows below a page's header: two at 1440x900 on the compare
 * page (the inputs table and the config diff above them). A window that shows fewer asks
 * for a row it does not draw yet, in the same batched request; it draws it once scrolled.
 */
export const FIRST_SCREEN_ROWS = 2;

/**
 * The series of the grid's first rows (each group's charts in rows of `columns`, groups in
 * order) for the URL's view: the charts a first screen shows below a page's header. A guess
 * that misses (another width, a page scrolled elsewhere) costs series the charts do not use.
 */
export function firstScreenSeries(runs: number[], keys: string[], params: URLSearchParams, windowWidth: number, root?: HTMLElement, rows = FIRST_SCREEN_ROWS): { shape: SeriesShape; keys: string[] } | null {
  const grid = chartColumns(windowWidth, root);
  const groups = groupKeys(chosenCharts(params.get("charts"), keys));
  if (!grid || groups.length === 0) return null;
  const shown: string[] = [];
  let left = rows;
  for (const [, members] of groups) {
    for (let start = 0; start < members.length && left > 0; start += grid.columns, left -= 1) {
      shown.push(...members.slice(start, start + grid.columns));
    }
    if (left === 0) break;
  }
  const shape = { runs, range: rangeIn(params), times: axisIn(params) === "time", points: pointsForWidth(grid.slotWidth) };
  return { shape, keys: shown };
}
