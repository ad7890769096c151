/** One dataset version: its stats (with the prompt length histogram) and a paged preview. */
import { useState } from "react";

import { Button } from "../../../components/Button";
import { Facts } from "../../../components/Facts";
import { Card, Columns, FormRow, layoutClass } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import { BinsChart } from "../../rewards/components/BinsChart";
import type { DatasetVersion } from "../api";
import { usePreview } from "../hooks";
import { PreviewRows } from "./PreviewRows";
import styles from "./VersionView.module.css";

const PAGE = 20;

export function VersionView({ version }: { version: DatasetVersion }) {
  const stats = version.stats;
  return (
    <Columns>
      <Card label="Stats">
        <h2 className={styles.heading}>
          v{version.number} stats{" "}
          <a className={ui.muted} href={version.download_url} download>
            Download parquet
          </a>
        </h2>
        <Facts
          facts={[
            { label: "Rows", value: version.row_count, testId: "row-count" },
            { label: "Format", value: version.data_format },
            { label: "Prompt chars (p50 / p95)", value: `${stats.prompt_chars.p50.toFixed(0)} / ${stats.prompt_chars.p95.toFixed(0)}` },
            { label: "Size", value: `${(version.size_bytes / 1024).toFixed(1)} KiB` },
          ]}
        />
        <BinsChart bins={stats.prompt_chars.histogram} xTitle="prompt length (characters)" label="Prompt lengths" digits={0} />
        <FormRow>
          <div className={layoutClass.grow}>
            <strong>Data sources</strong>
            <ul>
              {stats.data_sources.map((s) => (
                <li key={s.name}>
                  {s.name}: {s.count}
                </li>
              ))}
            </ul>
          </div>
          <div className={layoutClass.grow}>
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
        </FormRow>
        <p className={ui.muted}>
          Uploaded as {stats.upload.filename} ({version.source_format}, {stats.upload.size_bytes} bytes) by{" "}
          {version.created_by}
          {version.message ? ` — ${version.message}` : ""}. Mapping: prompt “{version.column_mapping.prompt_key}”
          {version.data_format === "prompt_answer" ? `, answer “${version.column_mapping.answer_key}”` : ""}.
        </p>
      </Card>
      <PreviewTable version={version} />
    </Columns>
  );
}

function PreviewTable({ version }: { version: DatasetVersion }) {
  const [offset, setOffset] = useState(0);
  const preview = usePreview(version.dataset, version.number, offset, PAGE);
  const page = preview.data;
  return (
    <Card label="Preview">
      <div className={styles.pager}>
        <h2 className={styles.heading}>Rows</h2>
        <span className={ui.muted}>
          {page ? `${page.total === 0 ? 0 : offset + 1}–${offset + page.rows.length} of ${page.total}` : "Loading…"}
        </span>
        <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
          Previous
        </Button>
        {/* A page cut by its size in bytes ends early: the next one starts where it ended. */}
        <Button disabled={!page || page.next_offset >= page.total} onClick={() => page && setOffset(page.next_offset)}>
          Next
        </Button>
      </div>
      {preview.isError ? <Notice tone="error">{preview.error.message}</Notice> : null}
      {page?.truncated ? <Notice tone="info">{page.message}</Notice> : null}
      {page ? <PreviewRows preview={page} offset={offset} label={`Rows of v${version.number}`} testId="preview-rows" /> : null}
    </Card>
  );
}
