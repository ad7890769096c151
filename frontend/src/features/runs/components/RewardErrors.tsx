import { Link } from "react-router";

import { ErrorState } from "../../../components/ErrorState";
import { Loading } from "../../../components/Spinner";
import ui from "../../../components/ui.module.css";
import { useFailingSamples } from "../../samples/hooks";
import { errorPercent } from "./RunStatus";
import { RunTraceback } from "./RunTraceback";

/** Distinct errors shown, most frequent first: enough to see what fails. */
const SHOWN = 3;

/** The distinct errors of failed samples (by their first line), most frequent first. */
export function distinctErrors(errors: string[]): { error: string; count: number }[] {
  const found = new Map<string, { error: string; count: number }>();
  for (const error of errors) {
    const key = error.split("\n")[0] ?? error;
    const entry = found.get(key);
    if (entry) entry.count += 1;
    else found.set(key, { error, count: 1 });
  }
  return [...found.values()].sort((a, b) => b.count - a.count);
}

/**
 * A run whose reward function failed on some rows: how often, its first distinct errors
 * with the user's lines, and a link to the failing samples. Nothing when none failed.
 */
export function RewardErrors({ run, slug, rate, code }: { run: number; slug: string; rate: number | null; code?: string }) {
  const failing = rate !== null && rate > 0;
  const samples = useFailingSamples(run, failing);
  if (!failing) return null;
  const errors = distinctErrors((samples.data?.results ?? []).map((s) => s.error));
  const stored = samples.data?.results.length ?? 0;
  return (
    <section aria-label="Reward errors" className={ui.card} style={{ marginBottom: 12 }}>
      <h3 style={{ margin: "0 0 6px" }}>Reward errors: {errorPercent(rate)}% of scored rows</h3>
      <p className={ui.muted} style={{ marginTop: 0 }}>
        The run kept training: a batch fails the run only above <code>reward.max_error_rate</code>. Failed rows score 0.{" "}
        <Link to={`/p/${slug}/runs/${run}/rollouts?errors=1`}>Open the failing samples</Link>
      </p>
      {samples.isPending ? <Loading what="the failing samples" /> : null}
      {samples.isError ? <ErrorState title="Could not load the failing samples" error={samples.error} onRetry={() => void samples.refetch()} /> : null}
      {samples.data && stored === 0 ? <p className={ui.muted}>None of the stored samples is one of them (the trainer stores a share of each step&apos;s samples).</p> : null}
      {errors.slice(0, SHOWN).map(({ error, count }) => (
        <div key={error}>
          <p className={ui.muted} style={{ margin: "8px 0 4px" }}>
            {count === stored ? `All of the ${stored} newest failing samples:` : `${count} of the ${stored} newest failing samples:`}
          </p>
          <RunTraceback text={error} code={code} label="Reward error" />
        </div>
      ))}
    </section>
  );
}
