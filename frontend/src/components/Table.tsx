import type { ReactNode } from "react";

import styles from "./ui.module.css";

export type Column<T> = {
  key: string;
  header: ReactNode;
  cell: (row: T) => ReactNode;
  /** When set, the header is a button that asks for this sort key. */
  sortKey?: string;
};

type TableProps<T> = {
  label: string;
  columns: Column<T>[];
  rows: T[];
  rowKey: (row: T) => string | number;
  sort?: { key: string; descending: boolean };
  onSort?: (key: string) => void;
  isSelected?: (row: T) => boolean;
};

/** A plain data table; sortable columns announce their order with aria-sort. */
export function Table<T>({ label, columns, rows, rowKey, sort, onSort, isSelected }: TableProps<T>) {
  return (
    <div className={styles.tableWrap}>
      <table className={styles.table} aria-label={label}>
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
            <tr key={rowKey(row)} className={isSelected?.(row) ? styles.selected : undefined}>
              {columns.map((column) => (
                <td key={column.key}>{column.cell(row)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
