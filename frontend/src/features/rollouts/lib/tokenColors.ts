/**
 * Colour scales for the per-token view. Signed values (advantages) get a
 * diverging scale centred on zero, so the sign reads at a glance; one-sided
 * values get a sequential scale whose strong end is the interesting one (an
 * unlikely token: a very negative log-probability; an uncertain one: a high
 * entropy).
 */

export type ScaleKind = "diverging" | "sequential";

export type TokenScale = {
  kind: ScaleKind;
  min: number;
  max: number;
  /** Sequential scales only: whether the low end is the strong colour. */
  emphasiseLow: boolean;
};

type Rgb = readonly [number, number, number];

const WHITE: Rgb = [255, 255, 255];
const NEGATIVE: Rgb = [217, 45, 32]; // red: below zero
const POSITIVE: Rgb = [21, 112, 239]; // blue: above zero
const STRONG: Rgb = [121, 40, 202]; // purple: the interesting end of a sequential scale
export const MISSING_COLOR = "rgb(228, 231, 236)";

/** Metrics whose low values are the interesting ones. */
const LOW_IS_NOTABLE = /logprob|log_prob|prob/i;
/** Metrics that are signed by nature, even if one recording happens to be one-sided. */
const SIGNED = /advantage|return|reward|kl|delta/i;

export function finiteValues(values: readonly (number | null | undefined)[]): number[] {
  return values.filter((v): v is number => typeof v === "number" && Number.isFinite(v));
}

/** Picks the scale that fits a metric's name and values. */
export function scaleFor(metric: string, values: readonly (number | null | undefined)[]): TokenScale {
  const finite = finiteValues(values);
  const min = finite.length ? Math.min(...finite) : 0;
  const max = finite.length ? Math.max(...finite) : 0;
  const signed = SIGNED.test(metric) || (min < 0 && max > 0);
  if (signed && !LOW_IS_NOTABLE.test(metric)) {
    const bound = Math.max(Math.abs(min), Math.abs(max));
    return { kind: "diverging", min: -bound, max: bound, emphasiseLow: false };
  }
  return { kind: "sequential", min, max, emphasiseLow: LOW_IS_NOTABLE.test(metric) };
}

function mix(from: Rgb, to: Rgb, t: number): string {
  const clamped = Math.min(1, Math.max(0, t));
  const [r, g, b] = from.map((c, i) => Math.round(c + (to[i]! - c) * clamped));
  return `rgb(${r}, ${g}, ${b})`;
}

/** Where a value sits on the scale, from 0 (weakest) to 1 (strongest), signed for diverging. */
export function intensity(scale: TokenScale, value: number): number {
  if (scale.kind === "diverging") {
    return scale.max === 0 ? 0 : Math.max(-1, Math.min(1, value / scale.max));
  }
  const span = scale.max - scale.min;
  if (span === 0) return 0;
  const t = (value - scale.min) / span;
  return Math.min(1, Math.max(0, scale.emphasiseLow ? 1 - t : t));
}

/** The background colour of a token with this value (grey when there is none). */
export function colorOf(scale: TokenScale, value: number | null | undefined): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return MISSING_COLOR;
  const t = intensity(scale, value);
  if (scale.kind === "diverging") return t < 0 ? mix(WHITE, NEGATIVE, -t) : mix(WHITE, POSITIVE, t);
  return mix(WHITE, STRONG, t);
}

/** Dark text on pale backgrounds, white on strong ones. */
export function textColorOf(scale: TokenScale, value: number | null | undefined): string {
  if (typeof value !== "number" || !Number.isFinite(value)) return "inherit";
  return Math.abs(intensity(scale, value)) > 0.6 ? "#fff" : "inherit";
}

/** Legend stops: value and colour, from the scale's low end to its high end. */
export function legendStops(scale: TokenScale, count = 5): { value: number; color: string }[] {
  return Array.from({ length: count }, (_, i) => {
    const value = scale.min + ((scale.max - scale.min) * i) / (count - 1);
    return { value, color: colorOf(scale, value) };
  });
}

/** Shows a token as the tokenizer decoded it, with whitespace made visible. */
export function visibleToken(text: string): string {
  return text.replace(/ /g, "·").replace(/\t/g, "→").replace(/\r/g, "␍").replace(/\n/g, "↵");
}
