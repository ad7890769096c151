/** The columns every table of scored rows starts with: which row, the response, the answer. */
import type { ReactNode } from "react";

import type { Column } from "../../../components/Table";
import styles from "./TestPanel.module.css";

type ScoredRow = { index: number; sample: number | null; solution_str: string; ground_truth: unknown };

export function scoredColumns<T extends ScoredRow>(response: (row: T) => ReactNode = () => null): Column<T>[] {
  return [
    { key: "row", header: "Row", cell: (row) => `${row.index}${row.sample !== null ? `.${row.sample}` : ""}` },
    {
      key: "response",
      header: "Response",
      cellProps: () => ({ className: styles.response }),
      cell: (row) => (
        <>
          <pre>{row.solution_str}</pre>
          {response(row)}
        </>
      ),
    },
    { key: "answer", header: "Answer", cell: (row) => <code>{typeof row.ground_truth === "string" ? row.ground_truth : JSON.stringify(row.ground_truth)}</code> },
  ];
}
