import type { ReactNode, TdHTMLAttributes } from "react";

import styles from "./ui.module.css";

export type Column<T> = {
  key: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** When set, the header is a button that asks for this sort key. */
  sortKey?: string;
  /** Attributes of the column's cells (a class, a title). */
  cellProps?: (row: T) => TdHTMLAttributes<HTMLTableCellElement>;
};

type TableProps<T> = {
  /** The table's accessible name (omit only when a heading beside it names it). */
  label?: string;
  columns: Column<T>[];
  rows: readonly T[];
  rowKey: (row: T) => string | number;
  sort?: { key: string; descending: boolean };
  onSort?: (key: string) => void;
  isSelected?: (row: T) => boolean;
  /** A class of the row (a failed row tinted, say). */
  rowClass?: (row: T) => string | undefined;
  /** Taller tables scroll inside this height (px). */
  maxHeight?: number;
  testId?: string;
};

/** A plain data table; sortable columns announce their order with aria-sort. */
export function Table<T>({ label, columns, rows, rowKey, sort, onSort, isSelected, rowClass, maxHeight, testId }: TableProps<T>) {
  return (
    <div className={styles.tableWrap} style={maxHeight ? { maxHeight, overflowY: "auto" } : undefined}>
      <table className={styles.table} aria-label={label} data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column) => {
              const sorted = column.sortKey && sort?.key === column.sortKey;
              return (
                <th
                  key={column.key}
                  scope="col"
                  aria-sort={sorted ? (sort.descending ? "descending" : "ascending") : undefined}
                >
                  {column.sortKey && onSort ? (
                    <button type="button" className={styles.sortButton} onClick={() => onSort(column.sortKey ?? "")}>
                      {column.header}
                      {sorted ? (sort.descending ? " ↓" : " ↑") : ""}
                    </button>
                  ) : (
                    column.header
                  )}
                </th>
              );
            })}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} className={[isSelected?.(row) ? styles.selected : "", rowClass?.(row) ?? ""].join(" ").trim() || undefined}>
              {columns.map((column) => (
                <td key={column.key} {...column.cellProps?.(row)}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
