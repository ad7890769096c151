/**
 * Room under a chart's x axis for its legend. Plotly lays a horizontal legend out in
 * equal columns (the widest entry's width) and, when the legend is taller than the room
 * left for it, squeezes the plot until the axis title lands on the tick labels or the
 * legend: so the chart asks for enough room up front (erring on the tall side).
 */

const ENTRY_PX = 46; // the line sample and the gaps around an entry
const CHAR_PX = 7; // a legend character at plotly's 12 px font, rounded up
const ROW_PX = 20;
const PAD_PX = 10;
const PLOT_MARGINS_PX = 60; // the plot's left and right margins: the legend's rows are narrower

/** Pixels the legend of these entries takes in a chart `width` px wide (0: no legend). */
export function legendRoom(names: readonly string[], width: number): number {
  if (names.length < 2) return 0; // a single run's chart has no legend
  const widths = names.map((name) => ENTRY_PX + CHAR_PX * name.length);
  const available = Math.max(1, width - PLOT_MARGINS_PX);
  const total = widths.reduce((sum, w) => sum + w, 0);
  const perRow = total <= available ? names.length : Math.max(1, Math.floor(available / Math.max(...widths)));
  return PAD_PX + ROW_PX * Math.ceil(names.length / perRow);
}
