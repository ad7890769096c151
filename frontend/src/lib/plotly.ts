/**
 * Loads plotly on demand (a dynamic import, its own chunk): only pages with charts
 * pay for it, never the initial bundle. One promise for the whole app.
 */
import type * as PlotlyTypes from "plotly.js-basic-dist-min";

export type Plotly = typeof PlotlyTypes;

let loading: Promise<Plotly> | null = null;

export function loadPlotly(): Promise<Plotly> {
  loading ??= import("plotly.js-basic-dist-min").then((module) => {
    const withDefault = module as unknown as { default?: Plotly };
    return withDefault.default ?? (module as unknown as Plotly);
  });
  return loading;
}
