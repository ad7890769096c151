/**
 * The run page's pinned headline charts: what a user watches while a run trains, picked
 * from the keys the trainer logged (trainer/training/metrics.py, trainer/training/step.py, trainer/training/loop.py).
 * Each chart draws one key; `band` names the keys of its spread (lowest, highest).
 */

export type Headline = { key: string; title: string; band?: [string, string] };

/** The first of `candidates` that the run logged. */
function first(keys: Set<string>, candidates: string[]): string | undefined {
  return candidates.find((k) => keys.has(k));
}

/** The spread of `<prefix>/mean`: its `/min` and `/max` keys, when both were logged. */
function spreadOf(keys: Set<string>, mean: string): [string, string] | undefined {
  const prefix = mean.slice(0, -"/mean".length);
  return keys.has(`${prefix}/min`) && keys.has(`${prefix}/max`) ? [`${prefix}/min`, `${prefix}/max`] : undefined;
}

function withSpread(keys: Set<string>, key: string, title: string): Headline {
  const band = spreadOf(keys, key);
  return band ? { key, title, band } : { key, title };
}

/**
 * Headline charts in the order a user reads them: reward (with its min/max spread),
 * validation score, response length, KL, entropy, then the reward's components.
 */
export function headlineCharts(logged: string[]): Headline[] {
  const keys = new Set(logged);
  const charts: Headline[] = [];
  if (keys.has("critic/score/mean")) charts.push(withSpread(keys, "critic/score/mean", "Reward (mean, min–max)"));
  for (const key of logged.filter((k) => /^val-core\/.+\/reward\/mean@/.test(k)).sort()) {
    charts.push({ key, title: `Validation score (${key.split("/")[1]})` });
  }
  if (keys.has("response_length/mean")) charts.push(withSpread(keys, "response_length/mean", "Response length (mean, min–max)"));
  // KL: the KL loss when it is a loss term, else the in-reward penalty, else the PPO KL.
  const kl = first(keys, ["actor/kl_loss", "actor/reward_kl_penalty", "actor/ppo_kl"]);
  if (kl) charts.push({ key: kl, title: `KL (${kl})` });
  if (keys.has("actor/entropy")) charts.push({ key: "actor/entropy", title: "Entropy" });
  for (const key of logged.filter((k) => /^reward\/.+\/mean$/.test(k)).sort()) {
    charts.push({ key, title: `Reward component: ${key.slice("reward/".length, -"/mean".length)}` });
  }
  return charts;
}
