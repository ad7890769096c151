import { Link } from "react-router";

import { Table, type Column } from "../../../components/Table";
import type { ModelResult } from "../api";
import styles from "../evaluations.module.css";
import { explorerLink, formatMetric, METRICS } from "../lib/results";

type Props = { slug: string; evaluation: number; k: number; models: ModelResult[] };

/** The models side by side: one row each, a column per metric, a link to its responses. */
export function ResultsTable({ slug, evaluation, k, models }: Props) {
  const columns: Column<ModelResult>[] = [
    { key: "model", header: "Model", cell: (m) => m.label },
    { key: "prompts", header: "Prompts", cell: (m) => m.scores?.prompts ?? "–" },
    ...METRICS.map((metric) => ({ key: metric.key, header: metric.label(k), cell: (m: ModelResult) => formatMetric(m.scores, metric.key) })),
    { key: "responses", header: "Responses", cell: (m) => <Link to={explorerLink(slug, evaluation, m.step)}>open</Link> },
  ];
  return <Table label="Results by model" columns={columns} rows={models} rowKey={(m) => m.step} />;
}

/** Mean score and pass@k per data source, a row per source and a column per model. */
export function SourcesTable({ k, models }: { k: number; models: ModelResult[] }) {
  const sources = [...new Set(models.flatMap((m) => Object.keys(m.by_data_source)))].sort();
  if (sources.length === 0) return null;
  const columns: Column<string>[] = [
    { key: "source", header: "Data source", cell: (s) => s },
    ...models.map((m) => ({
      key: `m${m.step}`,
      header: m.label,
      cell: (s: string) => {
        const scores = m.by_data_source[s];
        return scores ? `${formatMetric(scores, "mean_score")} · pass@${k} ${formatMetric(scores, "pass_at_k")}` : "–";
      },
    })),
  ];
  return (
    <>
      <h3 className={styles.subheading}>By data source</h3>
      <Table label="Results by data source" columns={columns} rows={sources} rowKey={(s) => s} />
    </>
  );
}
