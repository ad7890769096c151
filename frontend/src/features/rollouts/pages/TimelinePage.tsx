import { useMemo } from "react";
import { useParams, useSearchParams } from "react-router";

import { layoutClass } from "../../../components/Layout";
import { SelectField } from "../../../components/Field";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import { useRuns } from "../../runs/hooks";
import type { Sample } from "../../samples/api";
import { useTimeline } from "../../samples/hooks";
import { DiffView } from "../components/DiffView";
import review from "../components/review.module.css";
import { FinishPill, FoldedText, formatScore, PromptView } from "../components/SampleText";
import { RunHeader, useRunIds } from "./shared";
import styles from "./TimelinePage.module.css";

type Column = { run: number; samples: Sample[] };

/** Samples by step, in step order (the API answers them sorted by step). */
function stepsOf(samples: Sample[]): [number, Sample[]][] {
  const byStep = new Map<number, Sample[]>();
  for (const sample of samples) byStep.set(sample.step, [...(byStep.get(sample.step) ?? []), sample]);
  return [...byStep.entries()];
}

function TimelineColumn({
  title,
  samples,
  picked,
  onPick,
}: {
  title: string;
  samples: Sample[];
  picked: number[];
  onPick: (id: number) => void;
}) {
  return (
    <section className={styles.timeline} aria-label={title}>
      <h2 className={review.sectionTitle}>{title}</h2>
      {samples.length === 0 ? <p className={review.status}>No samples of this prompt.</p> : null}
      {stepsOf(samples).map(([step, atStep]) => (
        <div key={step} className={review.section}>
          <h3 className={review.sectionTitle}>
            Step {step} <span className={ui.muted}>· {atStep.length} response{atStep.length === 1 ? "" : "s"}</span>
          </h3>
          <div className={review.groupGrid}>
            {atStep.map((sample) => (
              <article key={sample.id} className={`${ui.card} ${review.section}`} data-step={sample.step}>
                <div className={review.rowMeta}>
                  <span className={review.score}>score {formatScore(sample.score)}</span>
                  <span>{sample.response_length} tok</span>
                  <FinishPill reason={sample.finish_reason} />
                  <label className={review.check}>
                    <input
                      type="checkbox"
                      checked={picked.includes(sample.id)}
                      onChange={() => onPick(sample.id)}
                      aria-label={`Compare sample ${sample.id}`}
                    />
                    compare
                  </label>
                </div>
                <FoldedText text={sample.response} label={`response of sample ${sample.id}`} />
              </article>
            ))}
          </div>
        </div>
      ))}
    </section>
  );
}

/** One prompt's responses at every recorded step, optionally beside another run's, with a diff. */
export function TimelinePage() {
  const { slug, runId, base } = useRunIds();
  const sampleId = Number(useParams().sampleId ?? 0);
  const [params, setParams] = useSearchParams();
  const otherId = params.get("compare") ? Number(params.get("compare")) : null;
  const runs = useRuns(slug);
  const mine = useTimeline(runId, sampleId);
  const theirs = useTimeline(otherId, sampleId);
  const picked = (params.get("diff") ?? "").split(",").filter(Boolean).map(Number);

  const columns: Column[] = [
    { run: runId, samples: mine.data?.samples ?? [] },
    ...(otherId !== null ? [{ run: otherId, samples: theirs.data?.samples ?? [] }] : []),
  ];
  const byId = useMemo(
    () => new Map([...(mine.data?.samples ?? []), ...(theirs.data?.samples ?? [])].map((s) => [s.id, s])),
    [mine.data, theirs.data],
  );
  // Two picked responses, or by default the first and last of this run's timeline.
  const own = mine.data?.samples ?? [];
  const pair =
    picked.length === 2
      ? picked.map((id) => byId.get(id))
      : own.length > 1
        ? [own[0], own[own.length - 1]]
        : [];
  const [before, after] = pair;

  const set = (key: string, value: string | null) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value);
    else next.delete(key);
    setParams(next, { replace: true });
  };
  const pick = (id: number) => {
    const chosen = picked.includes(id) ? picked.filter((p) => p !== id) : [...picked, id].slice(-2);
    set("diff", chosen.join(","));
  };

  return (
    <div className={layoutClass.page}>
      <RunHeader title="One prompt across steps and runs" back={base} />
      {mine.error ? <Notice tone="error">{mine.error.message}</Notice> : null}
      {mine.isPending ? <p className={review.status}>Loading the prompt's samples…</p> : null}
      {mine.data ? (
        <details className={ui.card} open>
          <summary>Prompt</summary>
          <PromptView prompt={mine.data.prompt} />
        </details>
      ) : null}
      <div className={review.filters}>
        <SelectField label="Compare with run" value={otherId ?? ""} onChange={(value) => set("compare", value || null)}>
          <option value="">(this run only)</option>
          {(runs.data?.results ?? [])
            .filter((r) => r.id !== runId)
            .map((r) => (
              <option key={r.id} value={r.id}>
                {r.name} (#{r.id})
              </option>
            ))}
        </SelectField>
        <span className={ui.muted}>Tick two responses to diff them (default: first and last step).</span>
      </div>
      {theirs.error ? <Notice tone="error">{theirs.error.message}</Notice> : null}
      {before && after ? <DiffView before={before} after={after} /> : null}
      <div className={otherId !== null ? layoutClass.columns : undefined}>
        {columns.map((column) => (
          <TimelineColumn
            key={column.run}
            title={`Run ${column.run}: ${column.samples.length} samples`}
            samples={column.samples}
            picked={picked}
            onPick={pick}
          />
        ))}
      </div>
    </div>
  );
}
