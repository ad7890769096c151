import { useEffect, useState } from "react";
import { useParams } from "react-router";

import { Button, ButtonAnchor, ButtonLink } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { inputClass } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { ProgressBar } from "../../../components/ProgressBar";
import { Loading } from "../../../components/Spinner";
import ui from "../../../components/ui.module.css";
import { useProjectSlug } from "../../projects/hooks";
import { useSample, useSampleList } from "../../samples/hooks";
import { evaluationReportUrl, type EvaluationDetail, type SampleQuestion } from "../api";
import { AnswersPanel } from "../components/AnswersPanel";
import { CheckpointChart } from "../components/CheckpointChart";
import { ResultsTable, SourcesTable } from "../components/ResultsTable";
import styles from "../evaluations.module.css";
import { POLL_MS, useCancelEvaluation, useEvaluation } from "../hooks";
import { answerColumns } from "../lib/answers";
import { chartRun, checkpointSeries, explorerLink, isLive, METRICS, type MetricKey } from "../lib/results";

/** One evaluation: progress, the models side by side, the chart across checkpoints. */
export function EvaluationPage() {
  const slug = useProjectSlug();
  const id = Number(useParams().evaluationId);
  const evaluation = useEvaluation(id);
  const cancel = useCancelEvaluation(id);
  const [metric, setMetric] = useState<MetricKey>("mean_score");
  if (evaluation.isPending) return <Loading what="the evaluation" />;
  if (evaluation.error) return <ErrorState title="Could not load the evaluation" error={evaluation.error} onRetry={() => void evaluation.refetch()} back={{ to: `/p/${slug}/evaluations`, label: "All evaluations" }} />;
  const e = evaluation.data;
  const { settings, models, progress } = e.results;
  const series = checkpointSeries(models, metric, chartRun(models));
  const label = METRICS.find((m) => m.key === metric)?.label(settings.k) ?? metric;
  const live = isLive(e.status);
  return (
    <>
      <PageHeader
        title={e.name}
        description={
          <span className={ui.row}>
            <span className={ui.pill} data-status={e.status}>
              {e.status}
            </span>
            <span>#{e.id}</span>
            <span>{settings.greedy ? "greedy" : `k=${settings.k} at temperature ${settings.temperature}`}</span>
            {e.inputs.validation_dataset ? (
              <span>
                on {e.inputs.validation === "held_out" ? "the held-out rows of " : ""}
                {e.inputs.validation_dataset.name} v{e.inputs.validation_dataset.number}
              </span>
            ) : null}
            <span>reward {e.inputs.reward.function !== null ? `${e.inputs.reward.name} v${e.inputs.reward.number}` : `built-in ${e.inputs.reward.name}`}</span>
          </span>
        }
        actions={
          <div className={ui.row}>
            <ButtonLink to={explorerLink(slug, e.id)}>Responses in the explorer</ButtonLink>
            <ButtonLink to={`/p/${slug}/runs/${e.id}?tab=logs`}>Logs</ButtonLink>
            <ButtonAnchor href={evaluationReportUrl(e.id)} download>
              Download report
            </ButtonAnchor>
            {live && e.status !== "cancelling" ? (
              <Button onClick={() => cancel.mutate()} disabled={cancel.isPending}>
                Cancel evaluation
              </Button>
            ) : null}
          </div>
        }
      />
      {e.status_reason ? <p className={ui.muted}>{e.status_reason}</p> : null}
      {e.status === "failed" && e.last_error ? <pre className={ui.mono}>{e.last_error}</pre> : null}
      {live || progress.fraction !== null ? (
        <div className={styles.progress}>
          <ProgressBar
            label="Responses scored"
            percent={e.status === "queued" || e.status === "starting" ? null : Math.round(100 * (progress.fraction ?? 0))}
            valueText={`${progress.responses} of ${progress.total ?? "?"} responses`}
          />
          <span className={styles.muted} data-testid="evaluation-progress">
            {e.status === "queued"
              ? "Queued: waiting for a slot to start."
              : e.status === "starting"
                ? "Starting: the trainer loads the models."
                : `${progress.responses.toLocaleString()} of ${progress.total?.toLocaleString() ?? "?"} responses scored`}
          </span>
        </div>
      ) : null}
      {e.question ? <Answers evaluation={e} question={e.question} slug={slug} /> : null}
      <section className={styles.section} aria-label="Results">
        <h2>Models side by side</h2>
        <ResultsTable slug={slug} evaluation={e.id} k={settings.k} models={models} />
        <SourcesTable k={settings.k} models={models} />
      </section>
      {models.some((m) => m.kind === "checkpoint") ? (
        <section className={styles.section} aria-label="Across checkpoints">
          <h2>Across checkpoints</h2>
          <label className={styles.metric}>
            <span className={styles.muted}>Metric</span>
            <select className={inputClass} value={metric} onChange={(event) => setMetric(event.target.value as MetricKey)}>
              {METRICS.map((m) => (
                <option key={m.key} value={m.key}>
                  {m.label(settings.k)}
                </option>
              ))}
            </select>
          </label>
          <CheckpointChart title={label} points={series.points} baseline={series.baseline} />
        </section>
      ) : null}
    </>
  );
}

/** An "Ask the checkpoints" evaluation's answers, read from its responses as they arrive. */
function Answers({ evaluation, question, slug }: { evaluation: EvaluationDetail; question: SampleQuestion; slug: string }) {
  const live = isLive(evaluation.status);
  const list = useSampleList({ run: evaluation.id, split: "eval" }, live, POLL_MS);
  const asked = useSample(question.sample);
  const stored = evaluation.results.progress.responses;
  const { refreshNewer } = list;
  const shown = list.pager.items.length;
  // The evaluation's poll counts the stored responses: fetch the ones not shown yet (the
  // last ones can land after the evaluation stopped being live).
  useEffect(() => {
    if (stored > shown) refreshNewer();
  }, [stored, shown, refreshNewer]);
  const columns = answerColumns(evaluation.results.models, list.pager.items, question.prompt);
  return <AnswersPanel slug={slug} question={question} asked={asked.data ?? null} columns={columns} live={live} error={list.error} onRetry={list.refreshNewer} />;
}
