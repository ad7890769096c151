import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { ToastProvider } from "../../../components/Toast";
import { jsonResponse, mockApi } from "../../../test/render";
import { NotificationSettings } from "./NotificationSettings";

const events = { run_succeeded: "A run finished", run_failed: "A run failed", critical_alert: "A critical alert" };
const shown = { webhook_url: "", webhook_set: false, webhook_events: [], email_events: [], email_enabled: true, events };

function renderFor(isOwner: boolean) {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={client}>
      <ToastProvider>
        <NotificationSettings slug="demo" isOwner={isOwner} />
      </ToastProvider>
    </QueryClientProvider>,
  );
}

describe("NotificationSettings", () => {
  it("lets an owner set the webhook and its events, and their own emails", async () => {
    const sent: unknown[] = [];
    mockApi({
      "GET /api/projects/demo/notifications/": shown,
      "PUT /api/projects/demo/notifications/": (request: Request) => {
        void request.clone().json().then((body) => sent.push(body));
        return jsonResponse({ ...shown, webhook_url: "https://hooks.example.com/x", webhook_set: true, webhook_events: ["run_failed"], email_events: ["critical_alert"] });
      },
    });
    renderFor(true);
    fireEvent.change(await screen.findByRole("textbox", { name: "Webhook URL" }), { target: { value: "https://hooks.example.com/x" } });
    fireEvent.click(screen.getByRole("group", { name: "Post to the webhook" }).querySelectorAll("input")[1]!); // a run failed
    fireEvent.click(screen.getByRole("group", { name: "Email me when" }).querySelectorAll("input")[2]!);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toEqual({ webhook_url: "https://hooks.example.com/x", webhook_events: ["run_failed"], email_events: ["critical_alert"] });
  });

  it("shows a member only whether the project posts, and saves only their emails", async () => {
    const sent: unknown[] = [];
    mockApi({
      "GET /api/projects/demo/notifications/": { ...shown, webhook_url: null, webhook_set: true, webhook_events: ["run_failed"], email_enabled: false },
      "PUT /api/projects/demo/notifications/": (request: Request) => {
        void request.clone().json().then((body) => sent.push(body));
        return jsonResponse(shown);
      },
    });
    renderFor(false);
    expect(await screen.findByText(/posts a run failed to a chat webhook/)).toBeInTheDocument();
    expect(screen.queryByRole("textbox", { name: "Webhook URL" })).toBeNull();
    expect(screen.getByText(/sends no email yet/)).toBeInTheDocument();
    fireEvent.click(screen.getByRole("group", { name: "Email me when" }).querySelectorAll("input")[1]!);
    fireEvent.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(sent).toEqual([{ email_events: ["run_failed"] }]));
  });
});
