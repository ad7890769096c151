import { Link } from "react-router";

import { ErrorState } from "../../../components/ErrorState";
import { Notice } from "../../../components/Notice";
import { Spinner } from "../../../components/Spinner";
import ui from "../../../components/ui.module.css";
import { FinishPill, FoldedText, formatScore, PromptView } from "../../rollouts/components/SampleText";
import type { Sample } from "../../samples/api";
import type { SampleQuestion } from "../api";
import styles from "../evaluations.module.css";
import type { AnswerColumn } from "../lib/answers";

type Props = {
  slug: string;
  question: SampleQuestion;
  /** The asked sample itself, for its own answer (null: loading, or the sample is gone). */
  asked: Sample | null;
  columns: AnswerColumn[];
  /** The evaluation is queued or running: a column without answers is still waiting. */
  live: boolean;
  error: Error | null;
  onRetry: () => void;
};

/**
 * "Ask the checkpoints": the sample's prompt, then a column per step with its answers, the
 * base model first. The columns scroll sideways on a wide screen and stack on a narrow one;
 * the row is one tab stop whose arrow keys scroll it.
 */
export function AnswersPanel({ slug, question, asked, columns, live, error, onRetry }: Props) {
  const sample = `/p/${slug}/runs/${question.run}/rollouts?sample=${question.sample}`;
  const differing = columns.filter((c) => c.samePrompt === false);
  return (
    <section className={styles.section} aria-label="Answers of the checkpoints">
      <h2>The question</h2>
      <p className={ui.muted}>
        {question.sample !== null ? <Link to={sample}>Sample #{question.sample}</Link> : "A deleted sample"} of run{" "}
        <Link to={`/p/${slug}/runs/${question.run}`}>{question.run_name}</Link>, step {question.step} ({question.split === "train" ? "training" : "validation"} rows, prompt{" "}
        <code>{question.group_id}</code>)
      </p>
      <details className={styles.question} open>
        <summary>The prompt, as the run rendered it</summary>
        <PromptView prompt={question.prompt} />
      </details>
      {asked ? (
        <div className={`${ui.card} ${styles.reply} ${styles.asked}`} data-testid="asked-answer">
          <div className={ui.row}>
            <strong>The sample&apos;s own answer</strong>
            <span className={ui.muted}>
              step {asked.step}, {asked.split === "train" ? "sampled in training" : "validation"}
            </span>
            <span>score {formatScore(asked.score)}</span>
          </div>
          <FoldedText text={asked.response} label="The sample's own answer" />
        </div>
      ) : null}
      {differing.length > 0 ? (
        <Notice tone="error">{differing.map((c) => c.title).join(", ")} answered another prompt than the sample&apos;s.</Notice>
      ) : null}
      <h2>Answers, a column per step</h2>
      {error ? (
        <ErrorState title="Could not load the answers" error={error} onRetry={onRetry} />
      ) : (
        <div className={styles.answers} role="region" aria-label="Answers by step" tabIndex={0} data-testid="answers">
          {columns.map((column) => (
            <AnswerCell key={column.step} column={column} live={live} />
          ))}
        </div>
      )}
    </section>
  );
}

function AnswerCell({ column, live }: { column: AnswerColumn; live: boolean }) {
  return (
    <section className={`${ui.card} ${styles.answer}`} aria-label={column.title} data-testid="answer-column">
      <header className={styles.answerHead}>
        <h3>{column.title}</h3>
        <span className={ui.muted}>{column.label}</span>
      </header>
      {column.answers.length === 0 ? (
        live ? (
          <p className={styles.waiting}>
            <Spinner label={`${column.title}: answering`} /> Waiting for its answer…
          </p>
        ) : (
          <p className={ui.muted}>No answer: the evaluation ended before this model answered.</p>
        )
      ) : (
        column.answers.map((a) => (
          <div key={a.id} className={styles.reply} data-testid="answer">
            <div className={ui.row}>
              <span>score {formatScore(a.score)}</span>
              <FinishPill reason={a.finish_reason} />
              <span className={ui.muted}>{a.response_length} tokens</span>
            </div>
            <FoldedText text={a.response} label={`${column.title} answer`} />
            {a.error ? <Notice tone="error">Reward error: {a.error}</Notice> : null}
          </div>
        ))
      )}
    </section>
  );
}
