import { useQueries, useQuery } from "@tanstack/react-query";
import { useEffect } from "react";
import { Link, useSearchParams } from "react-router";

import { ButtonAnchor } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { RunsIcon } from "../../../components/icons";
import ui from "../../../components/ui.module.css";
import { loadPlotly } from "../../../lib/plotly";
import { useProjectSlug } from "../../projects/hooks";
import { fetchMetricKeys, getRun, reportUrl, runKeys } from "../api";
import { ChartGrid } from "../components/ChartGrid";
import { RunStatusPill } from "../components/RunStatus";
import { differingPaths, formatValue } from "../configDiff";

const MIN_RUNS = 2;
const MAX_RUNS = 8;

/** Two to eight runs: overlaid curves and the config fields where they differ. */
export function ComparePage() {
  const slug = useProjectSlug();
  const [params] = useSearchParams();
  const ids = [...new Set((params.get("runs") ?? "").split(",").map(Number).filter((n) => Number.isInteger(n) && n > 0))].slice(0, MAX_RUNS);
  const runs = useQueries({ queries: ids.map((id) => ({ queryKey: runKeys.detail(id), queryFn: ({ signal }: { signal: AbortSignal }) => getRun(id, signal) })) });
  const keys = useQuery({
    queryKey: ["runs", "compare-keys", ids],
    queryFn: async ({ signal }) => [...new Set((await Promise.all(ids.map((id) => fetchMetricKeys(id, signal)))).flat())].sort(),
    enabled: ids.length >= MIN_RUNS,
  });
  useEffect(() => void loadPlotly(), []); // beside the runs' requests, not after them

  if (ids.length < MIN_RUNS) {
    return (
      <>
        <PageHeader title="Compare runs" />
        <EmptyState icon={<RunsIcon size={26} />} title="Choose two to eight runs" action={<Link to={`/p/${slug}/runs`}>Go to the runs list</Link>}>
          Tick the runs to compare in the runs list, then press Compare.
        </EmptyState>
      </>
    );
  }
  const failed = runs.find((r) => r.isError);
  if (failed) return <ErrorState title="Could not load a run to compare" error={failed.error} />;
  if (runs.some((r) => r.isPending)) return <Loading what="the runs" />;
  const details = runs.map((r) => r.data).filter((r) => r !== undefined);
  const name = (id: number) => details.find((r) => r.id === id)?.name ?? `#${id}`;
  const diff = differingPaths(details.map((r) => r.config));

  return (
    <>
      <PageHeader
        title="Compare runs"
        description={
          <span className={ui.row}>
            {details.map((r) => (
              <span key={r.id} className={ui.row}>
                <Link to={`/p/${slug}/runs/${r.id}`}>{r.name}</Link>
                <RunStatusPill status={r.status} />
              </span>
            ))}
          </span>
        }
        actions={
          <ButtonAnchor href={reportUrl(ids)} download>
            Download report
          </ButtonAnchor>
        }
      />
      <h2 style={{ fontSize: "1rem", margin: "8px 0" }}>Config: only what differs</h2>
      {diff.length ? (
        <Table
          label="Config differences"
          rows={diff}
          rowKey={(d) => d.path}
          columns={[
            { key: "path", header: "Field", cell: (d) => <code className={ui.mono}>{d.path}</code> },
            ...details.map((r, i) => ({ key: String(r.id), header: r.name, cell: (d: { values: unknown[] }) => formatValue(d.values[i]) })),
          ]}
        />
      ) : (
        <p className={ui.muted}>The runs have the same config.</p>
      )}
      <h2 style={{ fontSize: "1rem", margin: "24px 0 8px" }}>Curves</h2>
      {keys.isPending ? <Loading what="metric keys" /> : null}
      {keys.isError ? <ErrorState title="Could not load the metric keys" error={keys.error} /> : null}
      {keys.data ? <ChartGrid key={ids.join(",")} runs={ids} keys={keys.data} runLabel={name} emptyHint="None of these runs reported metrics yet." /> : null}
    </>
  );
}
