import { useState } from "react";
import { Link } from "react-router";

import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { CheckCircleIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table, type Column } from "../../../components/Table";
import { Time } from "../../../components/Time";
import { useProjectSlug } from "../../projects/hooks";
import type { Evaluation } from "../api";
import { NewEvaluationForm } from "../components/NewEvaluationForm";
import styles from "../evaluations.module.css";
import { useEvaluations } from "../hooks";

/** A project's evaluations, newest first, and the form that starts one. */
export function EvaluationsPage() {
  const slug = useProjectSlug();
  const evaluations = useEvaluations(slug);
  const [creating, setCreating] = useState(false);
  const columns: Column<Evaluation>[] = [
    { key: "name", header: "Evaluation", cell: (e) => <Link to={`/p/${slug}/evaluations/${e.id}`}>{e.name}</Link> },
    { key: "status", header: "Status", cell: (e) => <span data-status={e.status}>{e.status}</span> },
    { key: "models", header: "Models", cell: (e) => e.models.map((m) => m.label).join(", ") },
    {
      key: "sampling",
      header: "Sampling",
      cell: (e) => (e.settings.greedy ? "greedy" : `k=${e.settings.k}, T=${e.settings.temperature}`),
    },
    { key: "created", header: "Created", cell: (e) => <Time value={e.created_at} /> },
  ];
  return (
    <>
      <PageHeader
        title="Evaluations"
        description="Models and checkpoints answering a dataset's prompts, scored by a reward."
        actions={
          <Button variant="primary" onClick={() => setCreating((open) => !open)}>
            {creating ? "Close form" : "New evaluation"}
          </Button>
        }
      />
      {creating ? (
        <section className={styles.section} aria-label="New evaluation form">
          <NewEvaluationForm slug={slug} onDone={() => setCreating(false)} />
        </section>
      ) : null}
      {evaluations.isPending ? <Loading what="evaluations" /> : null}
      {evaluations.error ? <ErrorState title="Could not load the evaluations" error={evaluations.error} onRetry={() => void evaluations.refetch()} /> : null}
      {evaluations.data && evaluations.data.length === 0 && !creating ? (
        <EmptyState icon={<CheckCircleIcon size={26} />} title="No evaluations yet" action={<Button onClick={() => setCreating(true)}>New evaluation</Button>}>
          Evaluate a run's checkpoints from its page, or choose models and prompts here.
        </EmptyState>
      ) : null}
      {evaluations.data && evaluations.data.length > 0 ? <Table label="Evaluations" columns={columns} rows={evaluations.data} rowKey={(e) => e.id} /> : null}
    </>
  );
}
