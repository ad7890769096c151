import { useState } from "react";
import { Link } from "react-router";

import { TextField } from "../../../components/Field";
import { layoutClass } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { Table } from "../../../components/Table";
import { usePrompts } from "../../samples/hooks";
import review from "../components/review.module.css";
import { RunHeader, useRunIds } from "./shared";

/** The run's distinct prompts with how often and when each was sampled. */
export function PromptsPage() {
  const { runId, base } = useRunIds();
  const [q, setQ] = useState("");
  const prompts = usePrompts(runId, q.trim());
  const rows = prompts.data?.prompts ?? [];
  return (
    <div className={layoutClass.page}>
      <RunHeader title="Prompts" back={base} />
      <TextField label="Prompts containing" type="search" value={q} onChange={setQ} />
      {prompts.error ? <Notice tone="error">{prompts.error.message}</Notice> : null}
      {prompts.isPending ? <p className={review.status}>Loading prompts…</p> : null}
      {prompts.data && rows.length === 0 ? <p className={review.status}>No prompts match.</p> : null}
      {rows.length ? (
        <Table
          label="Prompts"
          rows={rows}
          rowKey={(p) => p.example_sample}
          columns={[
            {
              key: "prompt",
              header: "Prompt",
              cell: (p) => (
                <Link to={`${base}/samples/${p.example_sample}/timeline`} className={review.snippet}>
                  {p.prompt.slice(-160)}
                </Link>
              ),
            },
            { key: "source", header: "Source", cell: (p) => p.data_source },
            { key: "samples", header: "Samples", cell: (p) => p.samples },
            { key: "steps", header: "Steps", cell: (p) => p.steps },
            { key: "span", header: "First–last step", cell: (p) => `${p.first_step}–${p.last_step}` },
          ]}
        />
      ) : null}
    </div>
  );
}
