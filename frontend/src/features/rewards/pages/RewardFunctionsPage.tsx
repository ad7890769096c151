/** The project's reward functions, and a new one started from a built-in template. */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { Link, useNavigate, useParams } from "react-router";

import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { RewardIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { createFunction, listFunctions, listTemplates, rewardKeys } from "../api";
import styles from "./RewardFunctionsPage.module.css";

export function RewardFunctionsPage() {
  const slug = useParams().slug ?? "";
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const functions = useQuery({
    queryKey: rewardKeys.list(slug),
    queryFn: ({ signal }) => listFunctions(slug, signal),
  });
  const templates = useQuery({
    queryKey: rewardKeys.templates,
    queryFn: ({ signal }) => listTemplates(signal),
    staleTime: Infinity,
  });
  const [name, setName] = useState("");
  const [template, setTemplate] = useState("gsm8k");
  const create = useMutation({
    mutationFn: () =>
      createFunction({
        project: slug,
        name: name.trim(),
        description: "",
        entrypoint: "compute_score",
        message: "",
        ...(template ? { from_template: template as never } : {}),
      }),
    onSuccess: (created) => {
      void queryClient.invalidateQueries({ queryKey: rewardKeys.list(slug) });
      void navigate(`/p/${slug}/reward-functions/${created.id}`);
    },
  });

  function submit(event: FormEvent) {
    event.preventDefault();
    if (name.trim()) create.mutate();
  }

  return (
    <div className={styles.page}>
      <PageHeader
        title="Reward functions"
        description="The code that scores each response, versioned; test it before you train."
      />
      <form className={styles.create} onSubmit={submit} aria-label="New reward function">
        <label className={styles.field}>
          Name
          <input value={name} onChange={(e) => setName(e.target.value)} maxLength={100} required />
        </label>
        <label className={styles.field}>
          Start from
          <select aria-label="Start from" value={template} onChange={(e) => setTemplate(e.target.value)}>
            <option value="">an empty function</option>
            {templates.data?.map((t) => (
              <option key={t.name} value={t.name}>
                the {t.name} template{t.description ? ` — ${t.description}` : ""}
              </option>
            ))}
          </select>
        </label>
        <Button type="submit" variant="primary" disabled={create.isPending || !name.trim()}>
          Create
        </Button>
        {create.isError ? (
          <p className={styles.error} role="alert">
            {create.error.message}
          </p>
        ) : null}
      </form>
      {functions.isPending ? <p className={styles.muted}>Loading reward functions…</p> : null}
      {functions.isError ? (
        <p className={styles.error} role="alert">
          {functions.error.message}
        </p>
      ) : null}
      {functions.data?.length === 0 ? (
        <EmptyState icon={<RewardIcon size={26} />} title="No reward functions yet">
          Create one above: start from a built-in template (gsm8k, exact match, boxed math, …) and
          edit it.
        </EmptyState>
      ) : null}
      {functions.data && functions.data.length > 0 ? (
        <table className={styles.table}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Versions</th>
              <th scope="col">Latest</th>
              <th scope="col">Created by</th>
            </tr>
          </thead>
          <tbody>
            {functions.data.map((f) => (
              <tr key={f.id}>
                <td>
                  <Link to={`/p/${slug}/reward-functions/${f.id}`}>{f.name}</Link>
                </td>
                <td>{f.version_count}</td>
                <td>
                  {f.latest_version
                    ? `v${f.latest_version.number}${f.latest_version.message ? ` — ${f.latest_version.message}` : ""}`
                    : "–"}
                </td>
                <td>{f.created_by}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
    </div>
  );
}
