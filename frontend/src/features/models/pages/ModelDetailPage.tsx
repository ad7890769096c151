/** One model: what it is, where it comes from, its download, and its chat template (as text). */
import type { ReactNode } from "react";
import { Link, useParams } from "react-router";

import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { Facts } from "../../../components/Facts";
import { ModelIcon } from "../../../components/icons";
import { Page } from "../../../components/Layout";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import { formatParameters } from "../../../lib/units";
import { useProjectSlug } from "../../projects/hooks";
import { ModelStatusView, StatusPill } from "../components/ModelStatus";
import { useModel } from "../hooks";
import { KIND_LABELS, modelFacts, ROLE_LABELS } from "../lib/format";
import styles from "./Models.module.css";

export function ModelDetailPage() {
  const slug = useProjectSlug();
  const raw = useParams().modelId ?? "";
  const id = /^\d+$/.test(raw) ? Number(raw) : null;
  const model = useModel(id);
  const back = (
    <Link className={styles.back} to={`/p/${slug}/models`}>
      ← All models
    </Link>
  );

  if (id === null) {
    return (
      <Page>
        {back}
        <EmptyState icon={<ModelIcon size={26} />} title="No such model">
          “{raw}” is not a model id.
        </EmptyState>
      </Page>
    );
  }
  if (model.isPending) return <Loading what="the model" />;
  if (model.isError) {
    return (
      <Page>
        {back}
        <ErrorState title="The model could not be loaded" error={model.error} onRetry={() => void model.refetch()} />
      </Page>
    );
  }
  const m = model.data;
  const facts = modelFacts(m);
  const rows: [string, ReactNode][] = [
    ["Status", <StatusPill status={m.status} />],
    ["Kind", KIND_LABELS[m.kind]],
    ["Role", ROLE_LABELS[m.role]],
    ["Architecture", facts.architecture || "–"],
    ["Model type", facts.modelType || "–"],
    ["Parameters", facts.parameters === null ? "–" : `${formatParameters(facts.parameters)} (${facts.parameters.toLocaleString()})`],
    ["Tokenizer", facts.tokenizer || "–"],
  ];
  if (m.kind === "hub") rows.push(["Hub repository", `${m.hub_id}@${m.revision || "main"}`]);
  if (m.kind === "checkpoint" && m.run !== null) {
    rows.push(["From run", <Link to={`/p/${slug}/runs/${m.run}`}>{`Run ${m.run}${m.step !== null ? `, step ${m.step}` : ""}`}</Link>]);
  }
  rows.push(["Added", <><Time value={m.created_at} /> by {m.created_by}</>]);
  const pending = m.status === "queued" || m.status === "downloading";

  return (
    <Page>
      {back}
      <PageHeader title={m.name} description={`${KIND_LABELS[m.kind]} · ${ROLE_LABELS[m.role]}`} />
      {pending || m.status === "failed" ? (
        <section className={`${ui.card} ${styles.section}`} aria-label="Download">
          <h2 className={styles.panelTitle}>{pending ? "Download" : "Download failed"}</h2>
          <ModelStatusView model={m} full />
        </section>
      ) : null}
      <Facts label="About this model" tileWidth={150} facts={rows.map(([label, value]) => ({ label, value }))} />
      <section className={`${ui.card} ${styles.section}`} aria-labelledby="chat-template-title">
        <h2 id="chat-template-title" className={styles.panelTitle}>
          Chat template
        </h2>
        {facts.chatTemplate ? (
          <pre className={styles.template} data-testid="chat-template" tabIndex={0} aria-labelledby="chat-template-title">
            {facts.chatTemplate}
          </pre>
        ) : (
          <p className={ui.muted}>
            {m.status === "ready"
              ? "This model's tokenizer has no chat template: prompts are sent as plain text."
              : m.status === "failed"
                ? "Unknown: the model was not downloaded."
                : "Known once the model is downloaded."}
          </p>
        )}
      </section>
    </Page>
  );
}
