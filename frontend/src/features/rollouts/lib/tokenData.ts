/** Reading a sample's token data (whatever series the trainer recorded). */

export type TokenSeries = {
  tokens: string[];
  /** Numeric per-token series a user can colour by (log-probs, advantages, entropy...). */
  metrics: Record<string, (number | null)[]>;
  /** Whether each token counts in the loss; absent when not recorded. */
  lossMask: boolean[] | null;
  /** Every recorded series, for the hover read-out. */
  all: Record<string, unknown[]>;
};

const MASK_KEYS = ["loss_mask", "response_mask", "mask", "attention_mask"];
const NOT_METRICS = new Set(["token_ids", "tokens", ...MASK_KEYS]);

/** Splits token data into texts, numeric metrics and the loss mask; odd shapes are ignored. */
export function readTokenData(data: unknown): TokenSeries | null {
  if (typeof data !== "object" || data === null) return null;
  const all: Record<string, unknown[]> = {};
  for (const [key, value] of Object.entries(data)) if (Array.isArray(value)) all[key] = value;
  const ids = all.token_ids ?? [];
  const texts = all.tokens;
  const length = texts?.length ?? ids.length;
  if (length === 0) return null;
  const tokens = Array.from({ length }, (_, i) =>
    texts && typeof texts[i] === "string" ? (texts[i] as string) : `⟨${String(ids[i] ?? "?")}⟩`,
  );
  const metrics: Record<string, (number | null)[]> = {};
  for (const [key, values] of Object.entries(all)) {
    if (NOT_METRICS.has(key)) continue;
    if (!values.every((v) => v === null || typeof v === "number")) continue;
    metrics[key] = Array.from({ length }, (_, i) => {
      const v = values[i];
      return typeof v === "number" ? v : null;
    });
  }
  const maskKey = MASK_KEYS.find((key) => all[key]);
  const mask = maskKey ? all[maskKey]! : null;
  return {
    tokens,
    metrics,
    lossMask: mask ? Array.from({ length }, (_, i) => Boolean(mask[i] ?? true)) : null,
    all,
  };
}

/** The metric to colour by first: log-probabilities if recorded, else the first metric. */
export function defaultMetric(series: TokenSeries): string | null {
  const names = Object.keys(series.metrics);
  return names.find((n) => /logprob/i.test(n)) ?? names[0] ?? null;
}
