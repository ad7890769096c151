import { Link, useParams } from "react-router";

import { componentEntries, FinishPill, FoldedText, formatScore, PromptView } from "../components/SampleText";
import { useGroup, useRun } from "../hooks";
import styles from "../rollouts.module.css";
import { RunHeader, useRunIds } from "./shared";
import { countOf } from "../../../lib/plural";

/** Scores this close count as equal (the server's zero-spread rule). */
const SPREAD_EPSILON = 1e-9;

/** All samples of one prompt at one step, best score first, with the group's spread. */
export function GroupPage() {
  const { slug, runId, base } = useRunIds();
  const { step = "0", groupId = "" } = useParams();
  const run = useRun(runId);
  const group = useGroup(runId, Number(step), groupId);
  const samples = [...(group.data?.samples ?? [])].sort(
    (a, b) => (b.score ?? Number.NEGATIVE_INFINITY) - (a.score ?? Number.NEGATIVE_INFINITY),
  );
  const scores = samples.map((s) => s.score).filter((s): s is number => s !== null);
  const zeroSpread = scores.length > 0 && Math.max(...scores) - Math.min(...scores) <= SPREAD_EPSILON;
  const components = [...new Set(samples.flatMap((s) => componentEntries(s.components).map(([k]) => k)))];
  return (
    <div className={styles.page}>
      <RunHeader
        run={run.data}
        runId={runId}
        slug={slug}
        title={`Group ${groupId} at step ${step}`}
        back={`${base}?step=${step}`}
      />
      {group.error ? <div className={styles.errorBox}>{group.error.message}</div> : null}
      {group.isPending ? <p className={styles.status}>Loading the group…</p> : null}
      {group.data ? (
        <>
          <div className={styles.stats}>
            <span>{group.data.count} samples</span>
            <span>mean score {formatScore(group.data.score_mean)}</span>
            <span>std {formatScore(group.data.score_std)}</span>
            {zeroSpread ? (
              <span className={styles.warnPill} data-testid="zero-spread">
                zero spread: every score is equal, so GRPO learns nothing from this group
              </span>
            ) : (
              <span className={styles.okPill} data-testid="learning-signal">
                scores differ: the group carries a learning signal
              </span>
            )}
          </div>
          {samples[0] ? (
            <>
              <h2 className={styles.sectionTitle}>Prompt</h2>
              <PromptView prompt={samples[0].prompt} />
            </>
          ) : (
            <p className={styles.status}>This group has no live samples.</p>
          )}
          <div className={styles.groupGrid} data-testid="group-samples">
            {samples.map((sample, rank) => (
              <article key={sample.id} className={`${styles.card} ${styles.section}`} data-score={sample.score ?? ""}>
                <div className={styles.rowMeta}>
                  <span>#{rank + 1}</span>
                  <span className={styles.score}>score {formatScore(sample.score)}</span>
                  <span>adv {formatScore(sample.advantage)}</span>
                  <span>{sample.response_length} tok</span>
                  {sample.num_turns ? <span className={styles.pill}>{countOf(sample.num_turns, "turn")}</span> : null}
                  <FinishPill reason={sample.finish_reason} />
                </div>
                {components.length ? (
                  <table className={styles.table}>
                    <tbody>
                      {componentEntries(sample.components).map(([key, value]) => (
                        <tr key={key}>
                          <th scope="row">{key}</th>
                          <td>{formatScore(value)}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                ) : null}
                <FoldedText text={sample.response} label={`response of sample ${sample.id}`} />
                <nav className={styles.buttons}>
                  <Link to={`${base}?sample=${sample.id}&step=${sample.step}`}>In the explorer</Link>
                  {sample.has_token_data ? <Link to={`${base}/samples/${sample.id}/tokens`}>Tokens</Link> : null}
                  <Link to={`${base}/samples/${sample.id}/timeline`}>Across steps</Link>
                </nav>
              </article>
            ))}
          </div>
        </>
      ) : null}
    </div>
  );
}
