import { useId, useState, type FormEvent } from "react";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { Field, fieldErrorsAt, inputClass, TextField } from "../../../components/Field";
import { StatusIcon } from "../../../components/icons";
import { PageHeader } from "../../../components/PageHeader";
import { QueryList } from "../../../components/QueryList";
import { Table } from "../../../components/Table";
import { useToast } from "../../../components/Toast";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import type { ApiToken, ApiTokenCreated, TokenScope } from "../api";
import { useCreateToken, useRevokeToken, useTokens } from "../hooks";

const SCOPES: { scope: TokenScope; label: string; help: string }[] = [
  { scope: "read", label: "Read", help: "everything you can see in your projects (always on)" },
  { scope: "write", label: "Write", help: "create, change and delete runs, datasets, reward functions and labels" },
  { scope: "members", label: "Manage members", help: "invite people, change roles, rename or delete projects you own (needs write)" },
];

/** The end of `date` (yyyy-mm-dd) in the browser's time zone, as the API wants it. */
function endOfDay(date: string): string {
  return new Date(`${date}T23:59:59`).toISOString();
}

function today(): string {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}-${String(now.getDate()).padStart(2, "0")}`;
}

/** Personal API tokens for scripts and the CLI: the secret is shown once, at creation. */
export function TokensPage() {
  const tokens = useTokens();
  const revoke = useRevokeToken();
  const toast = useToast();
  const [created, setCreated] = useState<ApiTokenCreated | null>(null);

  function onRevoke(token: ApiToken) {
    revoke.mutate(token.id, {
      onSuccess: () => toast.show(`Token “${token.name}” revoked: scripts using it now get 401.`, "success"),
      onError: (error) => toast.error(error),
    });
  }

  return (
    <>
      <PageHeader
        title="API tokens"
        description={
          <>
            Tokens let scripts and the <code>rlstudio</code> CLI act as you, within the scopes you give them: send one as <code>Authorization: Bearer …</code>.
          </>
        }
      />
      <NewTokenForm onCreated={setCreated} />
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
      <QueryList
        query={tokens}
        what="tokens"
        failed="Could not load your tokens"
        empty={
          <EmptyState icon={<StatusIcon size={26} />} title="No tokens yet">
            Create one above to use the REST API from a script or CI; the studio shows its secret only once.
          </EmptyState>
        }
      >
        {(rows) => (
          <Table
            label="API tokens"
            rows={rows}
            rowKey={(t) => t.id}
            columns={[
              { key: "name", header: "Name", cell: (t) => t.name },
              { key: "prefix", header: "Starts with", cell: (t) => <code className={ui.mono}>{t.prefix}…</code> },
              {
                key: "scopes",
                header: "Scopes",
                cell: (t) => (
                  <span className={ui.row} style={{ gap: 4 }}>
                    {t.scopes.map((s) => (
                      <span key={s} className={ui.pill}>
                        {s}
                      </span>
                    ))}
                  </span>
                ),
              },
              { key: "created", header: "Created", cell: (t) => <Time value={t.created_at} empty="never" /> },
              { key: "expires", header: "Expires", cell: (t) => <Time value={t.expires_at} empty="never" /> },
              { key: "used", header: "Last used", cell: (t) => <Time value={t.last_used_at} empty="never" /> },
              {
                key: "state",
                header: "",
                cell: (t) =>
                  t.revoked_at ? (
                    <span className={ui.pill}>revoked</span>
                  ) : t.expires_at && new Date(t.expires_at) <= new Date() ? (
                    <span className={`${ui.pill} ${ui.warn}`}>expired</span>
                  ) : (
                    <Button aria-label={`Revoke ${t.name}`} onClick={() => onRevoke(t)} disabled={revoke.isPending}>
                      Revoke
                    </Button>
                  ),
              },
            ]}
          />
        )}
      </QueryList>
    </>
  );
}

/** Name, scopes (read always on; members needs write) and an optional last day. */
function NewTokenForm({ onCreated }: { onCreated: (token: ApiTokenCreated) => void }) {
  const create = useCreateToken();
  const toast = useToast();
  const ids = useId();
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Set<TokenScope>>(new Set(["read", "write"]));
  const [expires, setExpires] = useState("");

  function toggle(scope: TokenScope, on: boolean) {
    const next = new Set(scopes);
    if (on) next.add(scope);
    else next.delete(scope);
    if (scope === "members" && on) next.add("write"); // managing members is a write
    if (scope === "write" && !on) next.delete("members");
    setScopes(next);
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    create.mutate(
      { name, scopes: SCOPES.map((s) => s.scope).filter((s) => scopes.has(s)), expiresAt: expires ? endOfDay(expires) : null },
      {
        onSuccess: (token) => {
          onCreated(token);
          setName("");
          setExpires("");
        },
        onError: (error) => {
          if (!(error instanceof FieldErrors)) toast.error(error);
        },
      },
    );
  }

  const scopeErrors = fieldErrorsAt(create.error, "scopes");
  return (
    <form onSubmit={onSubmit} aria-label="New token" className={ui.card} style={{ marginBottom: 16, maxWidth: 720 }}>
      <h2 style={{ fontSize: "1rem", marginBottom: 12 }}>New token</h2>
      <div className={ui.row} style={{ alignItems: "flex-start", gap: 16 }}>
        <div style={{ flex: "2 1 220px" }}>
          <TextField label="Token name" errors={fieldErrorsAt(create.error, "name")} placeholder="e.g. laptop CLI" value={name} onChange={setName} required maxLength={100} />
        </div>
        <div style={{ flex: "1 1 160px" }}>
          <Field label="Expires (optional)" help="It stops working after this day." errors={fieldErrorsAt(create.error, "expires_at")}>
            {(props) => <input {...props} type="date" className={inputClass} min={today()} value={expires} onChange={(e) => setExpires(e.target.value)} />}
          </Field>
        </div>
      </div>
      <fieldset className={ui.field} style={{ border: 0, padding: 0, margin: "0 0 12px" }} aria-describedby={`${ids}-scope-error`}>
        <legend className={ui.label} style={{ marginBottom: 4 }}>
          Scopes
        </legend>
        {SCOPES.map(({ scope, label, help }) => (
          <label key={scope} style={{ display: "flex", gap: 8, alignItems: "baseline", fontSize: "0.875rem" }}>
            <input type="checkbox" checked={scopes.has(scope)} disabled={scope === "read"} onChange={(e) => toggle(scope, e.target.checked)} />
            <span>
              <strong>{label}</strong> <span className={ui.muted}>— {help}</span>
            </span>
          </label>
        ))}
        {scopeErrors.length ? (
          <span id={`${ids}-scope-error`} className={ui.fieldError} role="alert">
            {scopeErrors.join(" ")}
          </span>
        ) : null}
      </fieldset>
      <Button type="submit" variant="primary" disabled={create.isPending}>
        Create token
      </Button>
    </form>
  );
}
