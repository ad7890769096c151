import { Link } from "react-router";

import { ExtraInfo } from "../../../components/ExtraInfo";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import { countOf } from "../../../lib/plural";
import { AskCheckpointsButton } from "../../evaluations/components/AskCheckpointsButton";
import type { Sample, SampleDetail as SampleDetailData } from "../../samples/api";
import { Conversation } from "./Conversation";
import { LabelButtons } from "./LabelButtons";
import review from "./review.module.css";
import styles from "./SampleDetail.module.css";
import { componentEntries, FinishPill, FoldedText, formatScore, PromptView } from "./SampleText";

/** The list's copy (no turns) shows while the detail (with them) loads. */
type Props = { sample: Sample & Partial<Pick<SampleDetailData, "turns">>; base: string; me: string | null };

/** One sample in full: prompt, response (a multi-turn episode as its conversation),
 * reward, links to its group, tokens and timeline. */
export function SampleDetail({ sample, base, me }: Props) {
  const turns = sample.turns ?? null;
  return (
    <section className={`${ui.card} ${review.section}`} aria-label={`Sample ${sample.id}`}>
      <div className={review.header}>
        <h2 className={review.sectionTitle}>Sample {sample.id}</h2>
        <span className={ui.muted}>
          step {sample.step} · {sample.split} · {sample.data_source}
        </span>
        <FinishPill reason={sample.finish_reason} />
        {sample.num_turns ? <span className={ui.pill}>{countOf(sample.num_turns, "turn")}</span> : null}
      </div>
      <dl className={review.stats}>
        <div className={styles.stat}>
          <dt>score</dt>
          <dd className={review.score}>{formatScore(sample.score)}</dd>
        </div>
        <div className={styles.stat}>
          <dt>advantage</dt>
          <dd>{formatScore(sample.advantage)}</dd>
        </div>
        {componentEntries(sample.components).map(([key, value]) => (
          <div key={key} className={styles.stat}>
            <dt>{key}</dt>
            <dd>{formatScore(value)}</dd>
          </div>
        ))}
        <div className={styles.stat}>
          <dt>length</dt>
          <dd>
            {sample.prompt_length} + {sample.response_length} tokens
          </dd>
        </div>
        {sample.reward_version ? (
          <div className={styles.stat}>
            <dt>reward</dt>
            <dd>
              {sample.reward_function_name} v{sample.reward_version_number}
            </dd>
          </div>
        ) : null}
      </dl>
      <nav className={review.buttons} aria-label="Open">
        <Link to={`${base}/group/${sample.step}/${encodeURIComponent(sample.group_id)}`}>
          Group (Enter)
        </Link>
        {sample.has_token_data ? <Link to={`${base}/samples/${sample.id}/tokens`}>Tokens</Link> : null}
        <Link to={`${base}/samples/${sample.id}/timeline`}>Across steps and runs</Link>
        <AskCheckpointsButton sample={sample} />
      </nav>
      {sample.error ? <Notice tone="error">Reward error: {sample.error}</Notice> : null}
      {Object.keys(sample.reward_extra ?? {}).length > 0 ? (
        <>
          <h3 className={review.sectionTitle}>Reward extra info</h3>
          <ExtraInfo extra={sample.reward_extra} label="Reward extra info" />
        </>
      ) : null}
      <LabelButtons sample={sample.id} labels={sample.labels} me={me} />
      <h3 className={review.sectionTitle}>Prompt</h3>
      <PromptView prompt={sample.prompt} />
      {turns ? (
        <>
          <h3 className={review.sectionTitle}>Episode</h3>
          <Conversation turns={turns} />
          <details>
            <summary className={ui.muted}>The whole response as the model saw it</summary>
            <FoldedText text={sample.response} label="response" />
          </details>
        </>
      ) : (
        <>
          <h3 className={review.sectionTitle}>Response</h3>
          <FoldedText text={sample.response} label="response" />
        </>
      )}
      {sample.ground_truth ? (
        <>
          <h3 className={review.sectionTitle}>Ground truth</h3>
          <FoldedText text={sample.ground_truth} label="ground truth" />
        </>
      ) : null}
    </section>
  );
}
