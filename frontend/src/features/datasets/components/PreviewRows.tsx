/** Rows of a dataset version's preview, numbered from `offset`; chat prompts shown as messages. */
import { Table } from "../../../components/Table";
import type { Preview } from "../api";
import { cellText, chatMessages } from "../lib/chat";
import styles from "./PreviewRows.module.css";

type PreviewRowsProps = {
  preview: Preview;
  offset?: number;
  label: string;
  /** One line per cell (the run form's glance at the data). */
  compact?: boolean;
  testId?: string;
};

type Row = { index: number; values: Record<string, unknown> };

export function PreviewRows({ preview, offset = 0, label, compact = false, testId }: PreviewRowsProps) {
  const rows: Row[] = preview.rows.map((values, i) => ({ index: offset + i + 1, values: values as Record<string, unknown> }));
  return (
    <Table
      label={label}
      testId={testId}
      maxHeight={compact ? undefined : 560}
      rows={rows}
      rowKey={(row) => row.index}
      columns={[
        ...(compact ? [] : [{ key: "#", header: "#", cell: (row: Row) => row.index }]),
        ...preview.columns.map((c) => ({ key: c, header: c, cell: (row: Row) => <Cell value={row.values[c]} compact={compact} /> })),
      ]}
    />
  );
}

function Cell({ value, compact }: { value: unknown; compact: boolean }) {
  const messages = compact ? null : chatMessages(value);
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
  return <div className={compact ? `${styles.cell} ${styles.compact}` : styles.cell}>{cellText(value)}</div>;
}
