/** The project's models as a table; each name links to the model's page (its chat template). */
import { Link } from "react-router";

import { Table, type Column } from "../../../components/Table";
import ui from "../../../components/ui.module.css";
import { formatParameters } from "../../../lib/units";
import type { Model } from "../api";
import { KIND_LABELS, modelFacts, ROLE_LABELS } from "../lib/format";
import styles from "../pages/Models.module.css";
import { ModelStatusView } from "./ModelStatus";

/** Where a model comes from, in a few words: "Qwen/Qwen2.5-0.5B@main", "run 12, step 300". */
export function sourceLine(model: Model): string {
  if (model.kind === "hub") return `${model.hub_id}${model.revision && model.revision !== "main" ? `@${model.revision}` : ""}`;
  if (model.kind === "checkpoint" && model.run !== null) {
    return `run ${model.run}${model.step !== null ? `, step ${model.step}` : ""}`;
  }
  return "";
}

export function ModelsTable({ slug, models }: { slug: string; models: Model[] }) {
  const columns: Column<Model>[] = [
    {
      key: "name",
      header: "Name",
      cell: (m) => {
        const line = sourceLine(m);
        const source = line === m.name ? "" : line;
        return (
          <div className={styles.nameCell}>
            <Link className={styles.nameLink} to={`/p/${slug}/models/${m.id}`}>
              {m.name}
            </Link>
            {source ? <span className={`${ui.muted} ${ui.mono}`}>{source}</span> : null}
          </div>
        );
      },
    },
    { key: "kind", header: "Kind", cell: (m) => KIND_LABELS[m.kind] },
    { key: "role", header: "Role", cell: (m) => ROLE_LABELS[m.role] },
    { key: "architecture", header: "Architecture", cell: (m) => modelFacts(m).architecture || <span className={ui.muted}>–</span> },
    {
      key: "parameters",
      header: "Parameters",
      cell: (m) => {
        const { parameters } = modelFacts(m);
        return (
          <span className={styles.numeric} title={parameters === null ? undefined : `${parameters.toLocaleString()} parameters`}>
            {formatParameters(parameters)}
          </span>
        );
      },
    },
    { key: "tokenizer", header: "Tokenizer", cell: (m) => modelFacts(m).tokenizer || <span className={ui.muted}>–</span> },
    { key: "status", header: "Status", cell: (m) => <ModelStatusView model={m} /> },
  ];
  return <Table label="Models" columns={columns} rows={models} rowKey={(m) => m.id} />;
}
