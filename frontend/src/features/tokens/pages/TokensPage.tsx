import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { Field, fieldErrorsAt, inputClass } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { useToast } from "../../../components/Toast";
import { StatusIcon } from "../../../components/icons";
import ui from "../../../components/ui.module.css";
import { createToken, fetchTokens, revokeToken, tokenKeys, type ApiTokenCreated } from "../api";

function when(value: string | null): string {
  return value ? new Date(value).toLocaleString() : "never";
}

/** Personal API tokens for scripts and the CLI: the secret is shown once, at creation. */
export function TokensPage() {
  const queryClient = useQueryClient();
  const toast = useToast();
  const tokens = useQuery({ queryKey: tokenKeys.all, queryFn: ({ signal }) => fetchTokens(signal) });
  const [name, setName] = useState("");
  const [created, setCreated] = useState<ApiTokenCreated | null>(null);
  const create = useMutation({
    mutationFn: () => createToken(name, null),
    onSuccess: (token) => {
      setCreated(token);
      setName("");
      void queryClient.invalidateQueries({ queryKey: tokenKeys.all });
    },
    onError: (error) => {
      if (!(error instanceof FieldErrors)) toast.error(error);
    },
  });
  const revoke = useMutation({
    mutationFn: revokeToken,
    onSuccess: () => {
      toast.show("Token revoked: scripts using it now get 401.", "success");
      void queryClient.invalidateQueries({ queryKey: tokenKeys.all });
    },
    onError: (error) => toast.error(error),
  });

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    create.mutate();
  }

  return (
    <>
      <PageHeader title="API tokens" description={
          <>
            Tokens let scripts and the <code>rlstudio</code> CLI act as you: send one as <code>Authorization: Bearer …</code>.
          </>
        } />
      <form onSubmit={onSubmit} aria-label="New token" className={ui.row} style={{ alignItems: "flex-end", marginBottom: 16 }}>
        <Field label="Token name" errors={fieldErrorsAt(create.error, "name")}>
          {(props) => <input {...props} className={inputClass} placeholder="e.g. laptop CLI" value={name} onChange={(e) => setName(e.target.value)} required maxLength={100} />}
        </Field>
        <div style={{ marginBottom: 12 }}>
          <Button type="submit" variant="primary" disabled={create.isPending}>
            Create token
          </Button>
        </div>
      </form>
      {created ? (
        <div className={ui.card} role="status" style={{ marginBottom: 16, borderColor: "var(--ok-dot)" }}>
          <p style={{ fontWeight: 600 }}>Copy the token “{created.name}” now: it is shown only this once.</p>
          <code className={ui.mono} data-testid="new-token" style={{ display: "block", margin: "8px 0", wordBreak: "break-all" }}>
            {created.token}
          </code>
          <div className={ui.row}>
            <Button onClick={() => void navigator.clipboard?.writeText(created.token).then(() => toast.show("Copied.", "success"))}>Copy</Button>
            <Button onClick={() => setCreated(null)}>Done</Button>
          </div>
        </div>
      ) : null}
      {tokens.isPending ? <Loading what="tokens" /> : null}
      {tokens.isError ? <ErrorState title="Could not load your tokens" error={tokens.error} onRetry={() => void tokens.refetch()} /> : null}
      {tokens.data && tokens.data.length === 0 ? (
        <EmptyState icon={<StatusIcon size={26} />} title="No tokens yet">
          Create one above to use the REST API from a script or CI; the studio shows its secret only once.
        </EmptyState>
      ) : null}
      {tokens.data && tokens.data.length > 0 ? (
        <Table
          label="API tokens"
          rows={tokens.data}
          rowKey={(t) => t.id}
          columns={[
            { key: "name", header: "Name", cell: (t) => t.name },
            { key: "prefix", header: "Starts with", cell: (t) => <code className={ui.mono}>{t.prefix}…</code> },
            { key: "created", header: "Created", cell: (t) => when(t.created_at) },
            { key: "used", header: "Last used", cell: (t) => when(t.last_used_at) },
            {
              key: "state",
              header: "",
              cell: (t) =>
                t.revoked_at ? (
                  <span className={ui.pill}>revoked</span>
                ) : (
                  <Button aria-label={`Revoke ${t.name}`} onClick={() => revoke.mutate(t.id)} disabled={revoke.isPending}>
                    Revoke
                  </Button>
                ),
            },
          ]}
        />
      ) : null}
    </>
  );
}
