import { Link } from "react-router";

import type { Sample, SampleDetail as SampleDetailData } from "../api";
import styles from "../rollouts.module.css";
import { LabelButtons } from "./LabelButtons";
import { Conversation } from "./Conversation";
import { componentEntries, FinishPill, FoldedText, formatScore, PromptView } from "./SampleText";
import { countOf } from "../../../lib/plural";
import { ExtraInfo } from "../../../components/ExtraInfo";

/** The list's copy (no turns) shows while the detail (with them) loads. */
type Props = { sample: Sample & Partial<Pick<SampleDetailData, "turns">>; base: string; me: string | null };

/** One sample in full: prompt, response (a multi-turn episode as its conversation),
 * reward, links to its group, tokens and timeline. */
export function SampleDetail({ sample, base, me }: Props) {
  const turns = sample.turns ?? null;
  return (
    <section className={`${styles.card} ${styles.section}`} aria-label={`Sample ${sample.id}`}>
      <div className={styles.header}>
        <h2 className={styles.sectionTitle}>Sample {sample.id}</h2>
        <span className={styles.muted}>
          step {sample.step} · {sample.split} · {sample.data_source}
        </span>
        <FinishPill reason={sample.finish_reason} />
        {sample.num_turns ? <span className={styles.pill}>{countOf(sample.num_turns, "turn")}</span> : null}
      </div>
      <dl className={styles.stats}>
        <div className={styles.stat}>
          <dt>score</dt>
          <dd className={styles.score}>{formatScore(sample.score)}</dd>
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
            <dt>reward version</dt>
            <dd>{sample.reward_version}</dd>
          </div>
        ) : null}
      </dl>
      <nav className={styles.buttons} aria-label="Open">
        <Link to={`${base}/group/${sample.step}/${encodeURIComponent(sample.group_id)}`}>
          Group (Enter)
        </Link>
        {sample.has_token_data ? <Link to={`${base}/samples/${sample.id}/tokens`}>Tokens</Link> : null}
        <Link to={`${base}/samples/${sample.id}/timeline`}>Across steps and runs</Link>
      </nav>
      {sample.error ? <div className={styles.errorBox}>Reward error: {sample.error}</div> : null}
      {Object.keys(sample.reward_extra ?? {}).length > 0 ? (
        <>
          <h3 className={styles.sectionTitle}>Reward extra info</h3>
          <ExtraInfo extra={sample.reward_extra} label="Reward extra info" />
        </>
      ) : null}
      <LabelButtons sample={sample.id} labels={sample.labels} me={me} />
      <h3 className={styles.sectionTitle}>Prompt</h3>
      <PromptView prompt={sample.prompt} />
      {turns ? (
        <>
          <h3 className={styles.sectionTitle}>Episode</h3>
          <Conversation turns={turns} />
          <details>
            <summary className={styles.muted}>The whole response as the model saw it</summary>
            <FoldedText text={sample.response} label="response" />
          </details>
        </>
      ) : (
        <>
          <h3 className={styles.sectionTitle}>Response</h3>
          <FoldedText text={sample.response} label="response" />
        </>
      )}
      {sample.ground_truth ? (
        <>
          <h3 className={styles.sectionTitle}>Ground truth</h3>
          <FoldedText text={sample.ground_truth} label="ground truth" />
        </>
      ) : null}
    </section>
  );
}
