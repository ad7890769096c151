/** One dataset version: its stats (with the prompt length histogram) and a paged preview. */
import { useQuery } from "@tanstack/react-query";
import { useState } from "react";

import { Button } from "../../../components/Button";
import { BinsChart } from "../../rewards/components/BinsChart";
import { datasetKeys, getPreview, type DatasetVersion } from "../api";
import { cellText, chatMessages } from "../chat";
import styles from "../pages/Datasets.module.css";

const PAGE = 20;

export function VersionView({ version }: { version: DatasetVersion }) {
  const stats = version.stats;
  return (
    <div className={styles.columns}>
      <section className={styles.card} aria-label="Stats">
        <h2 className={styles.heading}>
          v{version.number} stats{" "}
          <a className={styles.muted} href={version.download_url} download>
            Download parquet
          </a>
        </h2>
        <dl className={styles.stats}>
          <div>
            <dt>Rows</dt>
            <dd data-testid="row-count">{version.row_count}</dd>
          </div>
          <div>
            <dt>Format</dt>
            <dd>{version.data_format}</dd>
          </div>
          <div>
            <dt>Prompt chars (p50 / p95)</dt>
            <dd>
              {stats.prompt_chars.p50.toFixed(0)} / {stats.prompt_chars.p95.toFixed(0)}
            </dd>
          </div>
          <div>
            <dt>Size</dt>
            <dd>{(version.size_bytes / 1024).toFixed(1)} KiB</dd>
          </div>
        </dl>
        <BinsChart bins={stats.prompt_chars.histogram} xTitle="prompt length (characters)" label="Prompt lengths" digits={0} />
        <div className={styles.formRow}>
          <div className={styles.grow}>
            <strong>Data sources</strong>
            <ul>
              {stats.data_sources.map((s) => (
                <li key={s.name}>
                  {s.name}: {s.count}
                </li>
              ))}
            </ul>
          </div>
          <div className={styles.grow}>
            <strong>Splits</strong>
            <ul>
              {stats.splits.map((s) => (
                <li key={s.name}>
                  {s.name}: {s.count}
                </li>
              ))}
              {stats.rows_without_split ? <li>no split: {stats.rows_without_split}</li> : null}
            </ul>
          </div>
        </div>
        <p className={styles.muted}>
          Uploaded as {stats.upload.filename} ({version.source_format}, {stats.upload.size_bytes} bytes) by{" "}
          {version.created_by}
          {version.message ? ` — ${version.message}` : ""}. Mapping: prompt “{version.column_mapping.prompt_key}”
          {version.data_format === "prompt_answer" ? `, answer “${version.column_mapping.answer_key}”` : ""}.
        </p>
      </section>
      <PreviewTable version={version} />
    </div>
  );
}

function PreviewTable({ version }: { version: DatasetVersion }) {
  const [offset, setOffset] = useState(0);
  const preview = useQuery({
    queryKey: datasetKeys.preview(version.dataset, version.number, offset, PAGE),
    queryFn: ({ signal }) => getPreview(version.dataset, version.number, offset, PAGE, signal),
    placeholderData: (previous) => previous,
  });
  const page = preview.data;
  return (
    <section className={styles.card} aria-label="Preview">
      <div className={styles.pager}>
        <h2 className={styles.heading}>Rows</h2>
        <span className={styles.muted}>
          {page ? `${page.total === 0 ? 0 : offset + 1}–${Math.min(offset + PAGE, page.total)} of ${page.total}` : "Loading…"}
        </span>
        <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </Button>
        <Button disabled={!page || offset + PAGE >= page.total} onClick={() => setOffset(offset + PAGE)}>
          Next
        </Button>
      </div>
      {preview.isError ? (
        <p className={styles.error} role="alert">
          {preview.error.message}
        </p>
      ) : null}
      {page ? (
        <div className={styles.tableWrap}>
          <table className={styles.table} data-testid="preview-rows">
            <thead>
              <tr>
                <th scope="col">#</th>
                {page.columns.map((c) => (
                  <th key={c} scope="col">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {page.rows.map((row, i) => (
                <tr key={offset + i}>
                  <td>{offset + i + 1}</td>
                  {page.columns.map((c) => (
                    <td key={c}>
                      <Cell value={row[c]} />
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

function Cell({ value }: { value: unknown }) {
  const messages = chatMessages(value);
  if (messages) {
    return (
      <div className={styles.chat}>
        {messages.map((m, i) => (
          <div key={i} className={styles.message}>
            <span className={styles.role}>{m.role}</span>
            {m.content}
          </div>
        ))}
      </div>
    );
  }
  return <div className={styles.cell}>{cellText(value)}</div>;
}
