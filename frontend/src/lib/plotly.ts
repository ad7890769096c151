/**
 * Loads plotly on demand (a dynamic import, its own chunk): only pages with charts
 * pay for it, never the initial bundle. One promise for the whole app.
 *
 * Plotly reads a few HTML tags in every text it draws (titles, legend names, hover
 * text: `<a href>` becomes a link). Metric keys, run names and reward component names
 * come from users and their reward code, so every string handed to plotly is made text
 * only (`textOnly`), except our own hover templates.
 */
import type * as PlotlyTypes from "plotly.js-basic-dist-min";

export type Plotly = typeof PlotlyTypes;

// Written by us, with plotly's %{...} placeholders and <extra> tags meant as markup.
const TEMPLATE_KEYS = new Set(["hovertemplate", "texttemplate"]);

function escapeMarkup(text: string): string {
  return text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** `value` with every string escaped so plotly draws it as text, not markup. */
export function textOnly<T>(value: T): T {
  if (typeof value === "string") return escapeMarkup(value) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => textOnly(item)) as T;
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = TEMPLATE_KEYS.has(key) ? item : textOnly(item);
    return out as T;
  }
  return value; // numbers, dates, typed arrays, DOM nodes
}

let loading: Promise<Plotly> | null = null;

export function loadPlotly(): Promise<Plotly> {
  loading ??= import("plotly.js-basic-dist-min").then((module) => {
    const withDefault = module as unknown as { default?: Plotly };
    const plotly = withDefault.default ?? (module as unknown as Plotly);
    const safe: Plotly = {
      ...plotly,
      react: ((root, data, layout, config) => plotly.react(root, textOnly(data), textOnly(layout), config)) as Plotly["react"],
      newPlot: ((root, data, layout, config) => plotly.newPlot(root, textOnly(data), textOnly(layout), config)) as Plotly["newPlot"],
    };
    return safe;
  });
  return loading;
}
