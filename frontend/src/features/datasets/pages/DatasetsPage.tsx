/** The project's datasets, and a new (empty) one to upload versions into. */
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useParams } from "react-router";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { fieldErrorsAt, TextField } from "../../../components/Field";
import { DatasetsIcon } from "../../../components/icons";
import { Card, FormRow, layoutClass, Page } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { PageHeader } from "../../../components/PageHeader";
import { QueryList } from "../../../components/QueryList";
import { Table } from "../../../components/Table";
import ui from "../../../components/ui.module.css";
import { useCreateDataset, useDatasets } from "../hooks";

export function DatasetsPage() {
  const slug = useParams().slug ?? "";
  const navigate = useNavigate();
  const datasets = useDatasets(slug);
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const create = useCreateDataset(slug);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (name.trim()) create.mutate({ name: name.trim(), description }, { onSuccess: (created) => void navigate(`/p/${slug}/datasets/${created.id}`) });
  }

  return (
    <Page>
      <PageHeader
        title="Datasets"
        description="Prompt sets with immutable versions: upload parquet, JSONL or CSV, check them, train on them."
      />
      <Card label="New dataset" onSubmit={submit}>
        <FormRow>
          <TextField label="Name" value={name} onChange={setName} maxLength={100} required errors={fieldErrorsAt(create.error, "name")} />
          <TextField label="Description" value={description} onChange={setDescription} className={layoutClass.grow} errors={fieldErrorsAt(create.error, "description")} />
          <Button type="submit" variant="primary" disabled={create.isPending || !name.trim()}>
            Create dataset
          </Button>
        </FormRow>
        {create.isError && !(create.error instanceof FieldErrors) ? <Notice tone="error">{create.error.message}</Notice> : null}
      </Card>
      <QueryList
        query={datasets}
        what="datasets"
        failed="Could not load the datasets"
        empty={
          <EmptyState icon={<DatasetsIcon size={26} />} title="No datasets yet">
            Create one above, then upload a file: verl parquet/JSONL, or any CSV/JSONL with a prompt
            column and an answer column.
          </EmptyState>
        }
      >
        {(rows) => (
          <Table
            label="Datasets"
            rows={rows}
            rowKey={(d) => d.id}
            columns={[
              {
                key: "name",
                header: "Name",
                cell: (d) => (
                  <>
                    <Link to={`/p/${slug}/datasets/${d.id}`}>{d.name}</Link>
                    {d.description ? <div className={ui.muted}>{d.description}</div> : null}
                  </>
                ),
              },
              { key: "versions", header: "Versions", cell: (d) => d.version_count },
              { key: "rows", header: "Rows (latest)", cell: (d) => d.latest_version?.row_count ?? "–" },
              { key: "format", header: "Format", cell: (d) => (d.latest_version ? `${d.latest_version.data_format} (${d.latest_version.source_format})` : "–") },
              { key: "by", header: "Created by", cell: (d) => d.created_by },
            ]}
          />
        )}
      </QueryList>
    </Page>
  );
}
