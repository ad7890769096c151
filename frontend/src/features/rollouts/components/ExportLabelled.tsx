import { useState } from "react";

import { Button } from "../../../components/Button";
import { useDatasets, useExportLabelled } from "../hooks";
import styles from "../rollouts.module.css";

/** Writes the run's labelled samples (optionally one label) as a new dataset version. */
export function ExportLabelled({ run, project }: { run: number; project: string }) {
  const datasets = useDatasets(project);
  const exporting = useExportLabelled(run);
  const [dataset, setDataset] = useState("");
  const [label, setLabel] = useState("");
  const choices = datasets.data?.results ?? [];
  const chosen = dataset || (choices[0] ? String(choices[0].id) : "");
  return (
    <section className={`${styles.card} ${styles.filters}`} aria-label="Export labelled samples">
      <h2 className={styles.sectionTitle}>Export labelled samples</h2>
      <label className={styles.field}>
        Dataset
        <select value={chosen} onChange={(e) => setDataset(e.target.value)} disabled={!choices.length}>
          {choices.length ? null : <option value="">no datasets in this project</option>}
          {choices.map((d) => (
            <option key={d.id} value={d.id}>
              {d.name}
            </option>
          ))}
        </select>
      </label>
      <label className={styles.field}>
        Only the label (optional)
        <input value={label} onChange={(e) => setLabel(e.target.value)} placeholder="any label" />
      </label>
      <Button
        variant="primary"
        disabled={!chosen || exporting.isPending}
        onClick={() =>
          exporting.mutate({ dataset: Number(chosen), ...(label.trim() ? { label: label.trim() } : {}) })
        }
      >
        {exporting.isPending ? "Exporting…" : "Export as a new version"}
      </Button>
      {exporting.data ? (
        <div className={styles.okBox} role="status">
          Version {exporting.data.number} of the dataset: {exporting.data.row_count} row{exporting.data.row_count === 1 ? "" : "s"}.
        </div>
      ) : null}
      {exporting.error ? (
        <div className={styles.errorBox} role="alert">
          {exporting.error.message}
        </div>
      ) : null}
    </section>
  );
}
