import { useState, type FormEvent } from "react";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { fieldErrorsAt, inputClass, SelectField, TextField } from "../../../components/Field";
import { PageHeader } from "../../../components/PageHeader";
import { QueryList } from "../../../components/QueryList";
import { Loading } from "../../../components/Spinner";
import { Table } from "../../../components/Table";
import { useToast } from "../../../components/Toast";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import type { Invitation, Role } from "../api";
import { NotificationSettings } from "../components/NotificationSettings";
import { useCurrentProject, useInviteMember, useMembers, useProjectInvitations, useProjectSlug, useRevokeInvitation, useSetMember } from "../hooks";

const ROLES: Role[] = ["owner", "member", "viewer"];
const ROLE_HELP = "Owners manage members; members create and change runs, datasets and rewards; viewers only read.";

function asRole(role: Role): string {
  return role === "owner" ? "an owner" : `a ${role}`;
}

export function MembersPage() {
  const slug = useProjectSlug();
  const { project } = useCurrentProject();
  const members = useMembers(slug);
  const setMember = useSetMember(slug);
  const toast = useToast();
  const isOwner = project?.role === "owner";

  function changeRole(name: string, newRole: Role) {
    setMember.mutate(
      { username: name, role: newRole },
      {
        onSuccess: () => toast.show(`${name} is now ${asRole(newRole)}.`, "success"),
        onError: (error) => toast.error(error),
      },
    );
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
                  <select aria-label={`Role of ${m.username}`} className={inputClass} value={m.role} onChange={(e) => changeRole(m.username, e.target.value as Role)}>
                    {ROLES.map((r) => (
                      <option key={r}>{r}</option>
                    ))}
                  </select>
                ) : (
                  m.role
                ),
            },
            { key: "since", header: "Member since", cell: (m) => <Time value={m.created_at} format="date" /> },
          ]}
        />
      ) : null}
      {isOwner ? (
        <Invitations slug={slug} />
      ) : (
        <p className={ui.muted} style={{ marginTop: 16 }}>
          Only the project&apos;s owners can invite people or change roles.
        </p>
      )}
      <div style={{ marginTop: 28 }}>
        <NotificationSettings slug={slug} isOwner={isOwner} />
      </div>
    </>
  );
}

/** The owners' part: invite someone by username, and the invitations still open. */
function Invitations({ slug }: { slug: string }) {
  const invitations = useProjectInvitations(slug);
  const invite = useInviteMember(slug);
  const revoke = useRevokeInvitation(slug);
  const toast = useToast();
  const [username, setUsername] = useState("");
  const [role, setRole] = useState<Role>("member");

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    invite.mutate(
      { username: username.trim(), role },
      {
        onSuccess: (made) => {
          toast.show(`Invited ${made.username} as ${asRole(made.role)}: they join when they accept.`, "success");
          setUsername("");
        },
        onError: (error) => {
          if (!(error instanceof FieldErrors)) toast.error(error);
        },
      },
    );
  }

  function onRevoke(invitation: Invitation) {
    revoke.mutate(invitation.id, {
      onSuccess: () => toast.show(`Invitation to ${invitation.username} revoked.`, "success"),
      onError: (error) => toast.error(error),
    });
  }

  return (
    <section aria-labelledby="invitations-title" style={{ marginTop: 28 }}>
      <h2 id="invitations-title" style={{ fontSize: "1rem", marginBottom: 4 }}>
        Invitations
      </h2>
      <p className={ui.muted} style={{ marginBottom: 12 }}>
        People join when they accept. An invitation is open for 14 days; the studio does not say whether a username has an account.
      </p>
      <form onSubmit={onSubmit} aria-label="Invite someone" className={ui.row} style={{ alignItems: "flex-end", marginBottom: 16 }}>
        <TextField label="Username" errors={fieldErrorsAt(invite.error, "username")} value={username} onChange={setUsername} required maxLength={150} autoComplete="off" />
        <SelectField label="Role" errors={fieldErrorsAt(invite.error, "role")} value={role} onChange={(value) => setRole(value as Role)}>
          {ROLES.map((r) => (
            <option key={r}>{r}</option>
          ))}
        </SelectField>
        <div style={{ marginBottom: 12 }}>
          <Button type="submit" variant="primary" disabled={invite.isPending}>
            Invite
          </Button>
        </div>
      </form>
      <QueryList
        query={invitations}
        what="invitations"
        failed="Could not load the invitations"
        empty={
          <p className={ui.muted}>No open invitations.</p>
        }
      >
        {(rows) => (
          <Table
            label="Open invitations"
            rows={rows}
            rowKey={(i) => i.id}
            columns={[
              { key: "user", header: "Username", cell: (i) => i.username },
              { key: "role", header: "Role", cell: (i) => i.role },
              { key: "by", header: "Invited by", cell: (i) => i.invited_by ?? "—" },
              { key: "expires", header: "Expires", cell: (i) => <Time value={i.expires_at} format="date" /> },
              {
                key: "revoke",
                header: "",
                cell: (i) => (
                  <Button aria-label={`Revoke the invitation to ${i.username}`} onClick={() => onRevoke(i)} disabled={revoke.isPending}>
                    Revoke
                  </Button>
                ),
              },
            ]}
          />
        )}
      </QueryList>
    </section>
  );
}
