/**
 * What changed between two versions of a dataset (computed on the server): the columns
 * added, removed or retyped, and the rows added, removed and changed, a page at a time.
 */
import { Fragment, useState } from "react";

import { Button } from "../../../components/Button";
import { SelectField } from "../../../components/Field";
import { Card, FormRow } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import ui from "../../../components/ui.module.css";
import type { DatasetVersion, DiffQuery, RowChange } from "../api";
import { useVersionDiff } from "../hooks";
import { cellText } from "../lib/chat";
import styles from "./VersionDiff.module.css";

const PAGE = 20;
type Change = NonNullable<DiffQuery["change"]>;
const CHANGE_CLASS: Record<Change, string | undefined> = {
  added: styles.added,
  removed: styles.removed,
  changed: styles.changed,
};

type Props = { datasetId: number; versions: readonly DatasetVersion[] };

/** The columns a row change shows: the differing ones, or the prompt (else all). */
function shownColumns(row: RowChange): string[] {
  if (row.change === "changed") return row.columns;
  const values = row.after ?? row.before ?? {};
  return "prompt" in values ? ["prompt"] : Object.keys(values);
}

function RowChangeItem({ row }: { row: RowChange }) {
  return (
    <li className={styles.row} data-testid="diff-row" data-change={row.change}>
      <div className={styles.rowHead}>
        <span className={`${ui.pill} ${CHANGE_CLASS[row.change]}`}>{row.change}</span>
        <code className={ui.mono}>{row.key}</code>
        {row.change === "changed" ? <span className={ui.muted}>{row.columns.join(", ")}</span> : null}
      </div>
      <div className={styles.values}>
        {shownColumns(row).map((column) => (
          <Fragment key={column}>
            <strong>{column}</strong>
            {row.before ? <pre className={`${styles.value} ${row.after ? styles.was : ""}`}>{cellText(row.before[column])}</pre> : <span />}
            {row.after ? <pre className={`${styles.value} ${row.before ? styles.now : ""}`}>{cellText(row.after[column])}</pre> : <span />}
          </Fragment>
        ))}
      </div>
    </li>
  );
}

export function VersionDiff({ datasetId, versions }: Props) {
  const newest = versions[0]?.number ?? 0;
  const [to, setTo] = useState(newest);
  const [from, setFrom] = useState(Math.max(1, newest - 1));
  const [change, setChange] = useState<Change | "">("");
  const [offset, setOffset] = useState(0);
  const query: DiffQuery | null =
    versions.length >= 2 ? { from, to, offset, limit: PAGE, ...(change ? { change } : {}) } : null;
  const diff = useVersionDiff(datasetId, query);
  if (versions.length < 2) return null;

  const pick = (set: (n: number) => void) => (value: string) => {
    set(Number(value));
    setOffset(0);
  };
  const options = versions.map((v) => (
    <option key={v.id} value={v.number}>
      v{v.number} ({v.row_count} rows)
    </option>
  ));
  const data = diff.data;
  return (
    <Card label="Compare versions" title="Compare versions" testId="version-diff">
      <FormRow>
        <SelectField label="From" aria-label="From version" value={from} onChange={pick(setFrom)}>
          {options}
        </SelectField>
        <SelectField label="To" aria-label="To version" value={to} onChange={pick(setTo)}>
          {options}
        </SelectField>
        <SelectField
          label="Rows"
          aria-label="Rows to show"
          value={change}
          onChange={(value) => {
            setChange(value as Change | "");
            setOffset(0);
          }}
        >
          <option value="">every change</option>
          <option value="added">added</option>
          <option value="removed">removed</option>
          <option value="changed">changed</option>
        </SelectField>
      </FormRow>
      {diff.isError ? <Notice tone="error">{diff.error.message}</Notice> : null}
      {!data ? <p className={ui.muted}>Comparing v{from} with v{to}…</p> : null}
      {data ? (
        <>
          <p className={styles.summary} data-testid="diff-counts" aria-busy={diff.isFetching}>
            <span className={`${ui.pill} ${styles.added}`}>{data.counts.added} added</span>
            <span className={`${ui.pill} ${styles.removed}`}>{data.counts.removed} removed</span>
            <span className={`${ui.pill} ${styles.changed}`}>{data.counts.changed} changed</span>
            <span className={ui.muted}>{data.counts.unchanged} unchanged</span>
          </p>
          {data.columns.length ? (
            <ul aria-label="Column changes" data-testid="column-changes">
              {data.columns.map((c) => (
                <li key={c.name}>
                  <code className={ui.mono}>{c.name}</code>{" "}
                  {c.change === "added"
                    ? `added (${c.after})`
                    : c.change === "removed"
                      ? `removed (was ${c.before})`
                      : `type changed: ${c.before} → ${c.after}`}
                </li>
              ))}
            </ul>
          ) : (
            <p className={ui.muted}>Same columns and types.</p>
          )}
          {data.rows.length ? (
            <p className={ui.muted}>
              A changed row shows its values in v{data.from_number} (red) and v{data.to_number} (green).
            </p>
          ) : null}
          {data.rows.length ? (
            <ul className={styles.rows} aria-label="Changed rows">
              {data.rows.map((row) => (
                <RowChangeItem key={`${row.change} ${row.key}`} row={row} />
              ))}
            </ul>
          ) : (
            <p className={ui.muted}>{from === to ? "The same version on both sides." : "No rows differ."}</p>
          )}
          {data.truncated ? <Notice tone="info">{data.message}</Notice> : null}
          {data.total > PAGE || data.truncated ? (
            <div className={ui.row}>
              <Button disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>
                Previous
              </Button>
              <span className={ui.muted}>
                {offset + 1}–{offset + data.rows.length} of {data.total}
              </span>
              {/* A page cut by its size in bytes ends early: the next one starts where it ended. */}
              <Button disabled={data.next_offset >= data.total} onClick={() => setOffset(data.next_offset)}>
                Next
              </Button>
            </div>
          ) : null}
        </>
      ) : null}
    </Card>
  );
}
