import { Link } from "react-router";

import { ButtonAnchor } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { RunsIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import ui from "../../../components/ui.module.css";
import { useMetricKeysOf } from "../../metrics/hooks";
import { useProjectSlug } from "../../projects/hooks";
import { LazyDiffView } from "../../rewards/components/LazyEditors";
import { useRewardVersion } from "../../rewards/hooks";
import { reportUrl, type RunDetail } from "../api";
import { ChartGrid } from "../components/ChartGrid";
import { differingInputs, inputItems, inputStyles } from "../components/RunInputs";
import { useConfigDiff } from "../components/RunPanels";
import { RewardErrorBadge, RunStatusPill } from "../components/RunStatus";
import { useRunsById } from "../hooks";
import { formatValue } from "../lib/configDiff";
import { useComparePageData } from "../loaders";

const MIN_RUNS = 2;

/** Two to eight runs: their inputs side by side, the config fields where they differ, the reward code diff and overlaid curves. */
export function ComparePage() {
  const slug = useProjectSlug();
  const ids = useComparePageData().runs; // the loader asked for them, their keys and plotly
  const runs = useRunsById(ids);
  const keys = useMetricKeysOf(ids, ids.length >= MIN_RUNS);
  const configDiff = useConfigDiff(ids.length >= MIN_RUNS ? runs.map((r) => r.data?.config) : []);

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
  const diff = configDiff ?? [];
  const differing = differingInputs(details.map((r) => r.inputs), slug);
  const items = details.map((r) => new Map(inputItems(r.inputs, slug).map((i) => [i.key, i])));
  const rows = [...new Map(items.flatMap((m) => [...m.values()]).map((i) => [i.key, i.label])).entries()].map(([key, label]) => ({ key, label }));
  // The first run whose reward differs from the first run's: its code diff.
  const rewardPair = details.slice(1).find((r) => r.inputs.reward.version !== details[0]?.inputs.reward.version || r.inputs.reward.name !== details[0]?.inputs.reward.name);

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
                <RewardErrorBadge rate={r.reward_error_rate} />
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
      <h2 style={{ fontSize: "1rem", margin: "8px 0" }}>Inputs</h2>
      <Table
        label="Run inputs"
        rows={rows}
        rowKey={(row) => row.key}
        columns={[
          {
            key: "input",
            header: "Input",
            cell: (row) => (
              <span className={ui.row}>
                {row.label}
                {differing.has(row.key) ? <span className={`${ui.pill} ${ui.warn}`}>differs</span> : null}
              </span>
            ),
          },
          ...details.map((r, i) => ({
            key: String(r.id),
            header: r.name,
            cell: (row: { key: string }) => {
              const item = items[i]?.get(row.key);
              if (!item) return "—";
              return differing.has(row.key) ? <span className={inputStyles.differs}>{item.node}</span> : item.node;
            },
          })),
        ]}
      />
      {details[0] && rewardPair ? <RewardCodeDiff a={details[0]} b={rewardPair} /> : null}
      <h2 style={{ fontSize: "1rem", margin: "24px 0 8px" }}>Config: only what differs</h2>
      {configDiff === null ? <Loading what="the config diff" /> : null}
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
      ) : configDiff !== null ? (
        <p className={ui.muted}>{differing.size ? "Same config; the inputs above differ." : "The runs have the same config and the same inputs."}</p>
      ) : null}
      <h2 style={{ fontSize: "1rem", margin: "24px 0 8px" }}>Curves</h2>
      {keys.isPending ? <Loading what="metric keys" /> : null}
      {keys.isError ? <ErrorState title="Could not load the metric keys" error={keys.error} /> : null}
      {keys.data ? <ChartGrid key={ids.join(",")} runs={ids} keys={keys.data} runLabel={name} emptyHint="None of these runs reported metrics yet." /> : null}
    </>
  );
}

/** The code of two runs' reward versions, side by side (a built-in reward has no code here). */
function RewardCodeDiff({ a, b }: { a: RunDetail; b: RunDetail }) {
  const ra = a.inputs.reward;
  const rb = b.inputs.reward;
  const before = useRewardVersion(ra.function, ra.number);
  const after = useRewardVersion(rb.function, rb.number);
  const label = (r: RunDetail) => (r.inputs.reward.function !== null ? `${r.inputs.reward.name} v${r.inputs.reward.number}` : `built-in ${r.inputs.reward.name}`);
  return (
    <section aria-label="Reward code diff">
      <h2 style={{ fontSize: "1rem", margin: "24px 0 8px" }}>
        Reward code: {label(a)} ({a.name}) → {label(b)} ({b.name})
      </h2>
      {ra.function === null || rb.function === null ? (
        <p className={ui.muted}>
          {ra.function === null ? a.name : b.name} uses a built-in reward of the trainer: it has no reward-function code to diff.
        </p>
      ) : before.isError || after.isError ? (
        <ErrorState title="Could not load the reward code" error={before.error ?? after.error} />
      ) : before.data && after.data ? (
        <LazyDiffView before={before.data.code} after={after.data.code} />
      ) : (
        <Loading what="the reward code" />
      )}
    </section>
  );
}
