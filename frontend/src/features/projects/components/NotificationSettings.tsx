import { useEffect, useState, type FormEvent } from "react";

import { Button } from "../../../components/Button";
import { fieldErrorsAt, TextField } from "../../../components/Field";
import { Card } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { Loading } from "../../../components/Spinner";
import { useToast } from "../../../components/Toast";
import ui from "../../../components/ui.module.css";
import { FieldErrors } from "../../../api/errors";
import type { NotificationsUpdate } from "../api";
import { useNotifications, useUpdateNotifications } from "../hooks";

type Event = NonNullable<NotificationsUpdate["email_events"]>[number];

function EventChoices({ events, chosen, onChange, label, disabled }: { events: Record<string, string>; chosen: string[]; onChange: (chosen: Event[]) => void; label: string; disabled?: boolean }) {
  return (
    <fieldset aria-label={label} style={{ border: 0, padding: 0, margin: "4px 0 8px", display: "flex", gap: 16, flexWrap: "wrap" }} disabled={disabled}>
      {Object.entries(events).map(([event, text]) => (
        <label key={event}>
          <input type="checkbox" checked={chosen.includes(event)} onChange={(e) => onChange((e.target.checked ? [...chosen, event] : chosen.filter((c) => c !== event)) as Event[])} /> {text}
        </label>
      ))}
    </fieldset>
  );
}

/**
 * What the project tells people outside the browser: its chat webhook (owners set it and
 * its events) and, for each member, the events they are emailed about.
 */
export function NotificationSettings({ slug, isOwner }: { slug: string; isOwner: boolean }) {
  const shown = useNotifications(slug);
  const save = useUpdateNotifications(slug);
  const toast = useToast();
  const [url, setUrl] = useState("");
  const [hookEvents, setHookEvents] = useState<Event[]>([]);
  const [emailEvents, setEmailEvents] = useState<Event[]>([]);
  useEffect(() => {
    if (!shown.data) return;
    setUrl(shown.data.webhook_url ?? "");
    setHookEvents(shown.data.webhook_events as Event[]);
    setEmailEvents(shown.data.email_events as Event[]);
  }, [shown.data]);

  if (shown.isPending) return <Loading what="the notification settings" />;
  if (!shown.data) return null;
  const data = shown.data;

  function submit(event: FormEvent) {
    event.preventDefault();
    save.mutate(isOwner ? { webhook_url: url.trim(), webhook_events: hookEvents, email_events: emailEvents } : { email_events: emailEvents }, {
      onSuccess: () => toast.show("Notification settings saved.", "success"),
      onError: (error) => {
        if (!(error instanceof FieldErrors)) toast.error(error);
      },
    });
  }

  return (
    <Card label="Notifications" title="Notifications" onSubmit={submit}>
      <p className={ui.muted} style={{ marginTop: 0 }}>
        Runs that finish or fail, and critical alerts, told outside the browser: in a chat channel (a webhook that Slack, Mattermost or Discord give you) and by email.
      </p>
      {isOwner ? (
        <>
          <TextField label="Webhook URL" help="The channel's incoming-webhook address (https://...). Empty: no webhook." value={url} onChange={setUrl} maxLength={500} placeholder="https://hooks.example.com/services/..." errors={fieldErrorsAt(save.error, "webhook_url")} />
          <h3 style={{ fontSize: "0.95rem", margin: "12px 0 0" }}>Post to the webhook when</h3>
          <EventChoices label="Post to the webhook" events={data.events} chosen={hookEvents} onChange={setHookEvents} />
        </>
      ) : (
        <p>{data.webhook_set ? `The project posts ${data.webhook_events.length ? data.webhook_events.map((e) => data.events[e]?.toLowerCase()).join(", ") : "nothing yet"} to a chat webhook (its owners set it).` : "The project posts to no chat webhook (its owners can set one)."}</p>
      )}
      <h3 style={{ fontSize: "0.95rem", margin: "12px 0 0" }}>Email me when</h3>
      {data.email_enabled ? null : <Notice tone="info">This studio sends no email yet: its operator sets a mail server (RLSTUDIO_EMAIL_HOST). Your choice is kept for then.</Notice>}
      <EventChoices label="Email me when" events={data.events} chosen={emailEvents} onChange={setEmailEvents} />
      <div className={ui.row}>
        <Button type="submit" variant="primary" disabled={save.isPending}>
          {save.isPending ? "Saving…" : "Save"}
        </Button>
      </div>
    </Card>
  );
}
