import { Link, useParams } from "react-router";

import { layoutClass } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import { countOf } from "../../../lib/plural";
import { useGroup } from "../../samples/hooks";
import review from "../components/review.module.css";
import { componentEntries, FinishPill, FoldedText, formatScore, PromptView } from "../components/SampleText";
import { RunHeader, useRunIds } from "./shared";

/** Scores this close count as equal (the server's zero-spread rule). */
const SPREAD_EPSILON = 1e-9;

/** All samples of one prompt at one step, best score first, with the group's spread. */
export function GroupPage() {
  const { runId, base } = useRunIds();
  const { step = "0", groupId = "" } = useParams();
  const group = useGroup(runId, Number(step), groupId);
  const samples = [...(group.data?.samples ?? [])].sort(
    (a, b) => (b.score ?? Number.NEGATIVE_INFINITY) - (a.score ?? Number.NEGATIVE_INFINITY),
  );
  const scores = samples.map((s) => s.score).filter((s): s is number => s !== null);
  const zeroSpread = scores.length > 0 && Math.max(...scores) - Math.min(...scores) <= SPREAD_EPSILON;
  const components = [...new Set(samples.flatMap((s) => componentEntries(s.components).map(([k]) => k)))];
  return (
    <div className={layoutClass.page}>
      <RunHeader title={`Group ${groupId} at step ${step}`}
        back={`${base}?step=${step}`}
      />
      {group.error ? <Notice tone="error">{group.error.message}</Notice> : null}
      {group.isPending ? <p className={review.status}>Loading the group…</p> : null}
      {group.data ? (
        <>
          <div className={review.stats}>
            <span>{group.data.count} samples</span>
            <span>mean score {formatScore(group.data.score_mean)}</span>
            <span>std {formatScore(group.data.score_std)}</span>
            {zeroSpread ? (
              <span className={`${ui.pill} ${ui.warn}`} data-testid="zero-spread">
                zero spread: every score is equal, so GRPO learns nothing from this group
              </span>
            ) : (
              <span className={`${ui.pill} ${ui.ok}`} data-testid="learning-signal">
                scores differ: the group carries a learning signal
              </span>
            )}
          </div>
          {samples[0] ? (
            <>
              <h2 className={review.sectionTitle}>Prompt</h2>
              <PromptView prompt={samples[0].prompt} />
            </>
          ) : (
            <p className={review.status}>This group has no live samples.</p>
          )}
          <div className={review.groupGrid} data-testid="group-samples">
            {samples.map((sample, rank) => (
              <article key={sample.id} className={`${ui.card} ${review.section}`} data-score={sample.score ?? ""}>
                <div className={review.rowMeta}>
                  <span>#{rank + 1}</span>
                  <span className={review.score}>score {formatScore(sample.score)}</span>
                  <span>adv {formatScore(sample.advantage)}</span>
                  <span>{sample.response_length} tok</span>
                  {sample.num_turns ? <span className={ui.pill}>{countOf(sample.num_turns, "turn")}</span> : null}
                  <FinishPill reason={sample.finish_reason} />
                </div>
                {components.length ? (
                  <table className={ui.table}>
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
                <nav className={review.buttons}>
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
