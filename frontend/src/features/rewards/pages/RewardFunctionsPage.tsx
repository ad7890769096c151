/** The project's reward functions, and a new one started from a built-in template. */
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useParams } from "react-router";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { fieldErrorsAt, SelectField, TextField } from "../../../components/Field";
import { RewardIcon } from "../../../components/icons";
import { Card, FormRow, Page } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { PageHeader } from "../../../components/PageHeader";
import { QueryList } from "../../../components/QueryList";
import { Table } from "../../../components/Table";
import { useCreateRewardFunction, useRewardFunctions, useRewardTemplates } from "../hooks";

export function RewardFunctionsPage() {
  const slug = useParams().slug ?? "";
  const navigate = useNavigate();
  const functions = useRewardFunctions(slug);
  const templates = useRewardTemplates();
  const [name, setName] = useState("");
  const [template, setTemplate] = useState("gsm8k");
  const create = useCreateRewardFunction(slug);

  function submit(event: FormEvent) {
    event.preventDefault();
    if (name.trim()) create.mutate({ name: name.trim(), template }, { onSuccess: (created) => void navigate(`/p/${slug}/reward-functions/${created.id}`) });
  }

  return (
    <Page>
      <PageHeader
        title="Reward functions"
        description="The code that scores each response, versioned; test it before you train."
      />
      <Card label="New reward function" onSubmit={submit}>
        <FormRow>
          <TextField label="Name" value={name} onChange={setName} maxLength={100} required errors={fieldErrorsAt(create.error, "name")} />
          <SelectField label="Start from" value={template} onChange={setTemplate} errors={fieldErrorsAt(create.error, "from_template")}>
            <option value="">an empty function</option>
            {templates.data?.map((t) => (
              <option key={t.name} value={t.name}>
                the {t.name} template{t.description ? ` — ${t.description}` : ""}
              </option>
            ))}
          </SelectField>
          <Button type="submit" variant="primary" disabled={create.isPending || !name.trim()}>
            Create
          </Button>
        </FormRow>
        {create.isError && !(create.error instanceof FieldErrors) ? <Notice tone="error">{create.error.message}</Notice> : null}
      </Card>
      <QueryList
        query={functions}
        what="reward functions"
        failed="Could not load the reward functions"
        empty={
          <EmptyState icon={<RewardIcon size={26} />} title="No reward functions yet">
            Create one above: start from a built-in template (gsm8k, exact match, boxed math, …) and
            edit it.
          </EmptyState>
        }
      >
        {(rows) => (
          <Table
            label="Reward functions"
            rows={rows}
            rowKey={(f) => f.id}
            columns={[
              { key: "name", header: "Name", cell: (f) => <Link to={`/p/${slug}/reward-functions/${f.id}`}>{f.name}</Link> },
              { key: "versions", header: "Versions", cell: (f) => f.version_count },
              {
                key: "latest",
                header: "Latest",
                cell: (f) => (f.latest_version ? `v${f.latest_version.number}${f.latest_version.message ? ` — ${f.latest_version.message}` : ""}` : "–"),
              },
              { key: "by", header: "Created by", cell: (f) => f.created_by },
            ]}
          />
        )}
      </QueryList>
    </Page>
  );
}
