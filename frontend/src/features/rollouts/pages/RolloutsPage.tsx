import { useQuery } from "@tanstack/react-query";
import { Link, useParams, useSearchParams } from "react-router";

import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { RunsIcon } from "../../../components/icons";
import ui from "../../../components/ui.module.css";
import { useProjectSlug } from "../../projects/hooks";
import { fetchSamples, runKeys } from "../../runs/api";

/**
 * Placeholder until the rollout viewer (web part 2) replaces it: the run's samples,
 * filtered to `?step=N` when a chart point was clicked.
 */
export function RolloutsPage() {
  const slug = useProjectSlug();
  const runId = Number(useParams().runId);
  const [params] = useSearchParams();
  const stepParam = params.get("step");
  const step = stepParam !== null && Number.isInteger(Number(stepParam)) ? Number(stepParam) : null;
  const samples = useQuery({ queryKey: runKeys.samples(runId, step), queryFn: ({ signal }) => fetchSamples(runId, step, signal) });
  return (
    <>
      <PageHeader
        title={step !== null ? `Rollouts at step ${step}` : "Rollouts"}
        description={<Link to={`/p/${slug}/runs/${runId}`}>Back to run #{runId}</Link>}
      />
      {samples.isPending ? <Loading what="samples" /> : null}
      {samples.isError ? <ErrorState title="Could not load the samples" error={samples.error} onRetry={() => void samples.refetch()} /> : null}
      {samples.data && samples.data.length === 0 ? (
        <EmptyState icon={<RunsIcon size={26} />} title="No samples here">
          The trainer records a few rollout samples every `logging.sample_every` steps; this step has none.
        </EmptyState>
      ) : null}
      {samples.data?.length ? (
        <Table
          label="Samples"
          rows={samples.data}
          rowKey={(s) => s.id}
          columns={[
            { key: "step", header: "Step", cell: (s) => s.step },
            { key: "prompt", header: "Prompt", cell: (s) => <span className={ui.mono}>{s.prompt.slice(0, 200)}</span> },
            { key: "response", header: "Response", cell: (s) => <span className={ui.mono}>{s.response.slice(0, 300)}</span> },
            { key: "score", header: "Reward", cell: (s) => (s.score === null ? "—" : s.score.toFixed(3)) },
            { key: "adv", header: "Advantage", cell: (s) => (s.advantage === null ? "—" : s.advantage.toFixed(3)) },
          ]}
        />
      ) : null}
    </>
  );
}
