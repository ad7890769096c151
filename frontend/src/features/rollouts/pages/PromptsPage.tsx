import { useState } from "react";
import { Link } from "react-router";

import { usePrompts, useRun } from "../hooks";
import styles from "../rollouts.module.css";
import { RunHeader, useRunIds } from "./shared";

/** The run's distinct prompts with how often and when each was sampled. */
export function PromptsPage() {
  const { slug, runId, base } = useRunIds();
  const run = useRun(runId);
  const [q, setQ] = useState("");
  const prompts = usePrompts(runId, q.trim());
  const rows = prompts.data?.prompts ?? [];
  return (
    <div className={styles.page}>
      <RunHeader run={run.data} runId={runId} slug={slug} title="Prompts" back={base} />
      <label className={styles.field}>
        Prompts containing
        <input type="search" value={q} onChange={(e) => setQ(e.target.value)} />
      </label>
      {prompts.error ? <div className={styles.errorBox}>{prompts.error.message}</div> : null}
      {prompts.isPending ? <p className={styles.status}>Loading prompts…</p> : null}
      {prompts.data && rows.length === 0 ? <p className={styles.status}>No prompts match.</p> : null}
      {rows.length ? (
        <table className={`${styles.table} ${styles.card}`}>
          <thead>
            <tr>
              <th>Prompt</th>
              <th>Source</th>
              <th>Samples</th>
              <th>Steps</th>
              <th>First–last step</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((p) => (
              <tr key={p.example_sample}>
                <td>
                  <Link to={`${base}/samples/${p.example_sample}/timeline`} className={styles.snippet}>
                    {p.prompt.slice(-160)}
                  </Link>
                </td>
                <td>{p.data_source}</td>
                <td>{p.samples}</td>
                <td>{p.steps}</td>
                <td>
                  {p.first_step}–{p.last_step}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
