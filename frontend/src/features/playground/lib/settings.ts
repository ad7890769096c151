/** The playground's settings as the form holds them (text), and what a request sends. */
import type { Sampling } from "../api";

export type SettingsDraft = {
  system: string;
  temperature: string;
  topP: string;
  maxNewTokens: string;
  minNewTokens: string;
};

export const DEFAULT_SETTINGS: SettingsDraft = { system: "", temperature: "0.7", topP: "0.95", maxNewTokens: "256", minNewTokens: "0" };

function number(text: string, fallback: number): number {
  const value = Number(text);
  return text.trim() !== "" && Number.isFinite(value) ? value : fallback;
}

/** The request's sampling; a field left empty takes its default (the server checks ranges). */
export function samplingOf(draft: SettingsDraft): Sampling {
  return {
    temperature: number(draft.temperature, 0.7),
    top_p: number(draft.topP, 0.95),
    max_new_tokens: Math.round(number(draft.maxNewTokens, 256)),
    min_new_tokens: Math.round(number(draft.minNewTokens, 0)),
  };
}
