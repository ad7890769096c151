/**
 * The explorer's filters live in the URL so a view can be shared, and alerts
 * can link to their evidence (`?steps=40-50&groups=g1,g2`, `?component=format`).
 * This module is the one mapping between URL parameters, the filter state and
 * the sample API's query.
 */
import type { SampleQuery } from "../../samples/api";

export type { SampleQuery };
export type Signal = "learning" | "zero";

export type ExplorerFilters = {
  stepMin: number | null;
  stepMax: number | null;
  split: string;
  scoreMin: number | null;
  scoreMax: number | null;
  dataSource: string;
  rewardVersion: number | null;
  label: string;
  errorsOnly: boolean;
  /** Only multi-turn episodes (samples with turns). */
  episodesOnly: boolean;
  q: string;
  signal: Signal | null;
  groups: string[];
  /** A reward component to show beside each score (an alert's dominating one). */
  component: string;
  /** Keep the step range's end on the newest step while the run is live. */
  follow: boolean;
};

export const NO_FILTERS: ExplorerFilters = {
  stepMin: null,
  stepMax: null,
  split: "",
  scoreMin: null,
  scoreMax: null,
  dataSource: "",
  rewardVersion: null,
  label: "",
  errorsOnly: false,
  episodesOnly: false,
  q: "",
  signal: null,
  groups: [],
  component: "",
  follow: false,
};

function number(text: string | null): number | null {
  if (text === null || text.trim() === "") return null;
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
}

function step(text: string | null): number | null {
  const value = number(text);
  return value !== null && Number.isInteger(value) && value >= 0 ? value : null;
}

/** Reads filters from URL parameters; malformed values are ignored, not fatal. */
export function parseFilters(params: URLSearchParams): ExplorerFilters {
  let stepMin = step(params.get("step_min"));
  let stepMax = step(params.get("step_max"));
  const single = step(params.get("step"));
  if (single !== null) stepMin = stepMax = single;
  const range = /^(\d+)-(\d+)$/.exec(params.get("steps") ?? "");
  if (range) {
    stepMin = Number(range[1]);
    stepMax = Number(range[2]);
  }
  if (stepMin !== null && stepMax !== null && stepMin > stepMax) [stepMin, stepMax] = [stepMax, stepMin];
  const signal = params.get("signal");
  return {
    stepMin,
    stepMax,
    split: params.get("split") ?? "",
    scoreMin: number(params.get("score_min")),
    scoreMax: number(params.get("score_max")),
    dataSource: params.get("data_source") ?? "",
    rewardVersion: step(params.get("reward_version_number")),
    label: params.get("label") ?? "",
    errorsOnly: params.get("errors") === "1",
    episodesOnly: params.get("episodes") === "1",
    q: params.get("q") ?? "",
    signal: signal === "learning" || signal === "zero" ? signal : null,
    groups: (params.get("groups") ?? "")
      .split(",")
      .map((g) => g.trim())
      .filter(Boolean),
    component: params.get("component") ?? "",
    follow: params.get("follow") === "1",
  };
}

/** Writes filters (and keeps unrelated parameters such as the selected sample). */
export function writeFilters(filters: ExplorerFilters, base?: URLSearchParams): URLSearchParams {
  const params = new URLSearchParams(base);
  for (const key of [
    "step", "steps", "step_min", "step_max", "split", "score_min", "score_max", "data_source",
    "reward_version_number", "label", "errors", "episodes", "q", "signal", "groups", "component", "follow",
  ]) {
    params.delete(key);
  }
  const set = (key: string, value: string | number | null | boolean) => {
    if (value === null || value === "" || value === false) return;
    params.set(key, value === true ? "1" : String(value));
  };
  if (filters.stepMin !== null && filters.stepMin === filters.stepMax) set("step", filters.stepMin);
  else if (filters.stepMin !== null && filters.stepMax !== null) {
    set("steps", `${filters.stepMin}-${filters.stepMax}`);
  } else {
    set("step_min", filters.stepMin);
    set("step_max", filters.stepMax);
  }
  set("split", filters.split);
  set("score_min", filters.scoreMin);
  set("score_max", filters.scoreMax);
  set("data_source", filters.dataSource);
  set("reward_version_number", filters.rewardVersion);
  set("label", filters.label);
  set("errors", filters.errorsOnly);
  set("episodes", filters.episodesOnly);
  set("q", filters.q);
  set("signal", filters.signal);
  set("groups", filters.groups.join(","));
  set("component", filters.component);
  set("follow", filters.follow);
  return params;
}

/** The sample list's query for these filters (unset filters are left out). */
export function sampleQuery(run: number, filters: ExplorerFilters): SampleQuery {
  const query: SampleQuery = { run };
  if (filters.stepMin !== null) query.step_min = filters.stepMin;
  if (filters.stepMax !== null) query.step_max = filters.stepMax;
  if (filters.scoreMin !== null) query.score_min = filters.scoreMin;
  if (filters.scoreMax !== null) query.score_max = filters.scoreMax;
  if (filters.split) query.split = filters.split;
  if (filters.dataSource) query.data_source = filters.dataSource;
  if (filters.rewardVersion !== null) query.reward_version_number = filters.rewardVersion;
  if (filters.label) query.label = filters.label;
  if (filters.errorsOnly) query.has_error = true;
  if (filters.episodesOnly) query.turns_min = 1;
  if (filters.q.trim()) query.q = filters.q.trim();
  if (filters.signal) query.signal = filters.signal;
  if (filters.groups.length) query.groups = filters.groups.join(",");
  return query;
}
