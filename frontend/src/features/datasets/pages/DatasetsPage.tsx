/** The project's datasets, and a new (empty) one to upload versions into. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useParams } from "react-router";

import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { DatasetsIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { createDataset, datasetKeys, listDatasets } from "../api";
import styles from "./Datasets.module.css";

export function DatasetsPage() {
  const slug = useParams().slug ?? "";
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const datasets = useQuery({
    queryKey: datasetKeys.list(slug),
    queryFn: ({ signal }) => listDatasets(slug, signal),
  });
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useMutation({
    mutationFn: () => createDataset(slug, name.trim(), description),
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: datasetKeys.list(slug) });
      void navigate(`/p/${slug}/datasets/${created.id}`);
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (name.trim()) create.mutate();
  }

  return (
    <div className={styles.page}>
      <PageHeader
        title="Datasets"
        description="Prompt sets with immutable versions: upload parquet, JSONL or CSV, check them, train on them."
      />
      <form className={styles.card} onSubmit={submit} aria-label="New dataset">
        <div className={styles.formRow}>
          <label className={styles.field}>
            Name
            <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />
          </label>
          <label className={`${styles.field} ${styles.grow}`}>
            Description
            <input value={description} onChange={(e) => setDescription(e.target.value)} />
          </label>
          <Button type="submit" variant="primary" disabled={create.isPending || !name.trim()}>
            Create dataset
          </Button>
        </div>
        {create.isError ? (
          <p className={styles.error} role="alert">
            {create.error.message}
          </p>
        ) : null}
      </form>
      {datasets.isPending ? <p className={styles.muted}>Loading datasets…</p> : null}
      {datasets.isError ? (
        <p className={styles.error} role="alert">
          {datasets.error.message}
        </p>
      ) : null}
      {datasets.data?.length === 0 ? (
        <EmptyState icon={<DatasetsIcon size={26} />} title="No datasets yet">
          Create one above, then upload a file: verl parquet/JSONL, or any CSV/JSONL with a prompt
          column and an answer column.
        </EmptyState>
      ) : null}
      {datasets.data && datasets.data.length > 0 ? (
        <table className={styles.table}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Versions</th>
              <th scope="col">Rows (latest)</th>
              <th scope="col">Format</th>
              <th scope="col">Created by</th>
            </tr>
          </thead>
          <tbody>
            {datasets.data.map((d) => (
              <tr key={d.id}>
                <td>
                  <Link to={`/p/${slug}/datasets/${d.id}`}>{d.name}</Link>
                  {d.description ? <div className={styles.muted}>{d.description}</div> : null}
                </td>
                <td>{d.version_count}</td>
                <td>{d.latest_version?.row_count ?? "–"}</td>
                <td>{d.latest_version ? `${d.latest_version.data_format} (${d.latest_version.source_format})` : "–"}</td>
                <td>{d.created_by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
