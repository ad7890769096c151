import { useParams } from "react-router";

import { layoutClass } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import { countOf } from "../../../lib/plural";
import { useSample } from "../../samples/hooks";
import { Conversation } from "../components/Conversation";
import review from "../components/review.module.css";
import { formatScore, PromptView } from "../components/SampleText";
import { TokenStrip } from "../components/TokenStrip";
import { readTokenData } from "../lib/tokenData";
import { RunHeader, useRunIds } from "./shared";

/** One response token by token, coloured by a metric the user picks. */
export function TokensPage() {
  const { base } = useRunIds();
  const sampleId = Number(useParams().sampleId ?? 0);
  const sample = useSample(sampleId);
  const series = sample.data ? readTokenData(sample.data.token_data) : null;
  return (
    <div className={layoutClass.page}>
      <RunHeader title={`Tokens of sample ${sampleId}`}
        back={`${base}?sample=${sampleId}${sample.data ? `&step=${sample.data.step}` : ""}`}
      />
      {sample.error ? <Notice tone="error">{sample.error.message}</Notice> : null}
      {sample.isPending ? <p className={review.status}>Loading the sample…</p> : null}
      {sample.data ? (
        <>
          <div className={review.stats}>
            <span>step {sample.data.step}</span>
            <span>group {sample.data.group_id}</span>
            <span className={review.score}>score {formatScore(sample.data.score)}</span>
            <span>advantage {formatScore(sample.data.advantage)}</span>
            <span>{sample.data.response_length} tokens</span>
          </div>
          {series ? (
            <TokenStrip series={series} />
          ) : (
            <div className={ui.card}>
              This sample has no token data: the trainer records it for a seeded fraction of samples
              (<code>logging.token_data_fraction</code>).
            </div>
          )}
          {sample.data.turns ? (
            <details className={ui.card}>
              <summary>Episode ({countOf(sample.data.turns.length, "turn")})</summary>
              <Conversation turns={sample.data.turns} />
            </details>
          ) : null}
          <details className={ui.card}>
            <summary>Prompt</summary>
            <PromptView prompt={sample.data.prompt} />
          </details>
        </>
      ) : null}
    </div>
  );
}
