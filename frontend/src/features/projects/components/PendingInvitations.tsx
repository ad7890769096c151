import { useNavigate } from "react-router";

import { Button } from "../../../components/Button";
import { UsersIcon } from "../../../components/icons";
import { useToast } from "../../../components/Toast";
import { Time } from "../../../components/Time";
import ui from "../../../components/ui.module.css";
import type { Invitation } from "../api";
import { useAnswerInvitation, useMyInvitations } from "../hooks";

/**
 * Invitations to the signed-in user, on every page until answered: accepting joins the
 * project and opens it; declining closes the invitation. Nothing shows when there are none.
 */
export function PendingInvitations() {
  const invitations = useMyInvitations();
  const answer = useAnswerInvitation();
  const toast = useToast();
  const navigate = useNavigate();
  if (!invitations.data?.length) return null;

  // The answer is awaited here, not handed to `mutate`'s callbacks: TanStack Query drops
  // those when the observer has no listener at that moment, and then the toast and the
  // move to the joined project never came (seen twice in CI under load).
  async function respond(invitation: Invitation, accept: boolean) {
    try {
      await answer.mutateAsync({ id: invitation.id, accept });
    } catch (error) {
      toast.error(error);
      return;
    }
    if (!accept) return toast.show(`Declined the invitation to ${invitation.project_name}.`, "success");
    toast.show(`You joined ${invitation.project_name} as ${invitation.role === "owner" ? "an owner" : `a ${invitation.role}`}.`, "success");
    void navigate(`/p/${invitation.project}/runs`);
  }

  return (
    <section aria-label="Invitations to you" style={{ display: "grid", gap: 8, marginBottom: 20 }}>
      {invitations.data.map((invitation) => (
        <div key={invitation.id} className={`${ui.card} ${ui.row}`} style={{ borderColor: "var(--color-accent)", background: "var(--color-accent-soft)", padding: "10px 14px" }}>
          <UsersIcon size={18} />
          <p style={{ margin: 0, flex: "1 1 260px" }}>
            {invitation.invited_by ?? "An owner"} invited you to <strong>{invitation.project_name}</strong> as {invitation.role}.{" "}
            <span className={ui.muted}>Open until <Time value={invitation.expires_at} format="date" />.</span>
          </p>
          <div className={ui.row}>
            <Button variant="primary" onClick={() => void respond(invitation, true)} disabled={answer.isPending} aria-label={`Accept the invitation to ${invitation.project_name}`}>
              Accept
            </Button>
            <Button onClick={() => void respond(invitation, false)} disabled={answer.isPending} aria-label={`Decline the invitation to ${invitation.project_name}`}>
              Decline
            </Button>
          </div>
        </div>
      ))}
    </section>
  );
}
