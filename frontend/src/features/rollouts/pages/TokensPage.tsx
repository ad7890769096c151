import { useParams } from "react-router";

import { Conversation } from "../components/Conversation";
import { TokenStrip } from "../components/TokenStrip";
import { formatScore, PromptView } from "../components/SampleText";
import { useRun, useSample } from "../hooks";
import { readTokenData } from "../lib/tokenData";
import styles from "../rollouts.module.css";
import { RunHeader, useRunIds } from "./shared";
import { countOf } from "../../../lib/plural";

/** One response token by token, coloured by a metric the user picks. */
export function TokensPage() {
  const { slug, runId, base } = useRunIds();
  const sampleId = Number(useParams().sampleId ?? 0);
  const run = useRun(runId);
  const sample = useSample(sampleId);
  const series = sample.data ? readTokenData(sample.data.token_data) : null;
  return (
    <div className={styles.page}>
      <RunHeader
        run={run.data}
        runId={runId}
        slug={slug}
        title={`Tokens of sample ${sampleId}`}
        back={`${base}?sample=${sampleId}${sample.data ? `&step=${sample.data.step}` : ""}`}
      />
      {sample.error ? <div className={styles.errorBox}>{sample.error.message}</div> : null}
      {sample.isPending ? <p className={styles.status}>Loading the sample…</p> : null}
      {sample.data ? (
        <>
          <div className={styles.stats}>
            <span>step {sample.data.step}</span>
            <span>group {sample.data.group_id}</span>
            <span className={styles.score}>score {formatScore(sample.data.score)}</span>
            <span>advantage {formatScore(sample.data.advantage)}</span>
            <span>{sample.data.response_length} tokens</span>
          </div>
          {series ? (
            <TokenStrip series={series} />
          ) : (
            <div className={styles.card}>
              This sample has no token data: the trainer records it for a seeded fraction of samples
              (<code>logging.token_data_fraction</code>).
            </div>
          )}
          {sample.data.turns ? (
            <details className={styles.card}>
              <summary>Episode ({countOf(sample.data.turns.length, "turn")})</summary>
              <Conversation turns={sample.data.turns} />
            </details>
          ) : null}
          <details className={styles.card}>
            <summary>Prompt</summary>
            <PromptView prompt={sample.data.prompt} />
          </details>
        </>
      ) : null}
    </div>
  );
}
