import { useState, type FormEvent } from "react";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { Field, fieldErrorsAt, inputClass } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { useToast } from "../../../components/Toast";
import type { Role } from "../api";
import { useCurrentProject, useMembers, useProjectSlug, useSetMember } from "../hooks";

const ROLES: Role[] = ["owner", "member", "viewer"];
const ROLE_HELP = "Owners manage members; members create and change runs, datasets and rewards; viewers only read.";

export function MembersPage() {
  const slug = useProjectSlug();
  const { project } = useCurrentProject();
  const members = useMembers(slug);
  const setMember = useSetMember(slug);
  const toast = useToast();
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<Role>("member");
  const isOwner = project?.role === "owner";

  function save(name: string, newRole: Role, after?: () => void) {
    setMember.mutate(
      { username: name, role: newRole },
      {
        onSuccess: () => {
          toast.show(`${name} is now ${newRole === "owner" ? "an owner" : `a ${newRole}`}.`, "success");
          after?.();
        },
        onError: (error) => {
          if (!(error instanceof FieldErrors)) toast.error(error);
        },
      },
    );
  }

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    save(username, role, () => setUsername(""));
  }

  return (
    <>
      <PageHeader title="Members" description={`Who can see and change ${project?.name ?? slug}. ${ROLE_HELP}`} />
      {members.isPending ? <Loading what="members" /> : null}
      {members.isError ? <ErrorState title="Could not load the members" error={members.error} onRetry={() => void members.refetch()} /> : null}
      {members.data ? (
        <Table
          label="Members"
          rows={members.data}
          rowKey={(m) => m.id}
          columns={[
            { key: "user", header: "User", cell: (m) => m.username },
            {
              key: "role",
              header: "Role",
              cell: (m) =>
                isOwner ? (
                  <select aria-label={`Role of ${m.username}`} className={inputClass} value={m.role} onChange={(e) => save(m.username, e.target.value as Role)}>
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                ) : (
                  m.role
                ),
            },
            { key: "since", header: "Member since", cell: (m) => new Date(m.created_at).toLocaleDateString() },
          ]}
        />
      ) : null}
      {isOwner ? (
        <form onSubmit={onSubmit} aria-label="Add a member" style={{ marginTop: 24, maxWidth: 420 }}>
          <h2 style={{ fontSize: "1rem", marginBottom: 8 }}>Add a member</h2>
          <Field label="Username" help="They need an account on this studio." errors={fieldErrorsAt(setMember.error, "username")}>
            {(props) => <input {...props} className={inputClass} value={username} onChange={(e) => setUsername(e.target.value)} required />}
          </Field>
          <Field label="Role" errors={fieldErrorsAt(setMember.error, "role")}>
            {(props) => (
              <select {...props} className={inputClass} value={role} onChange={(e) => setRole(e.target.value as Role)}>
                {ROLES.map((r) => (
                  <option key={r}>{r}</option>
                ))}
              </select>
            )}
          </Field>
          <Button type="submit" variant="primary" disabled={setMember.isPending}>
            Add member
          </Button>
        </form>
      ) : (
        <p style={{ marginTop: 16, color: "var(--color-text-subtle)" }}>Only the project&apos;s owners can add members or change roles.</p>
      )}
    </>
  );
}
