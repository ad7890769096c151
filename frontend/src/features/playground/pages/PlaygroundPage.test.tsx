import { fireEvent, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { jsonResponse, mockApi, renderApp } from "../../../test/render";

const okHealth = { status: "ok", version: "0.1.0", components: {} };
const models = [
  { key: "model:1", kind: "model", id: 1, label: "demo-model", detail: "Demo model", server: null, server_message: "" },
  { key: "checkpoint:9", kind: "checkpoint", id: 9, label: "demo @ step 4", detail: "checkpoint of run 3", server: "ready", server_message: "" },
];

describe("PlaygroundPage", () => {
  it("sends the message with Enter (Shift+Enter is a new line) to the checkpoint in the URL, and shows it loading", async () => {
    const sent: unknown[] = [];
    const fetchMock = mockApi({
      "GET /api/health": okHealth,
      "GET /api/playground/models/": models,
      "POST /api/playground/warm/": () => jsonResponse(models[1]),
      "POST /api/playground/exchanges/": (request: Request) => {
        void request.clone().json().then((body) => sent.push(body));
        return jsonResponse({ id: "e1", replies: [{ id: "r1", target: "checkpoint:9", label: "demo @ step 4", state: "loading" }] }, 201);
      },
    });
    renderApp("/p/demo/playground?model=checkpoint:9");
    expect(await screen.findByRole("region", { name: "Chat with demo @ step 4" })).toBeInTheDocument();
    expect(screen.getByTestId("server-state")).toHaveTextContent("warm");
    const box = screen.getByRole("textbox", { name: "Message" });
    fireEvent.change(box, { target: { value: "What is 3+4?" } });
    fireEvent.keyDown(box, { key: "Enter", shiftKey: true });
    expect(sent).toEqual([]);
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toMatchObject({
      project: "demo",
      chats: [{ target: { checkpoint: 9 }, messages: [{ role: "user", content: "What is 3+4?" }] }],
      sampling: { temperature: 0.7, top_p: 0.95, max_new_tokens: 256, min_new_tokens: 0 },
    });
    expect(await screen.findByText(/Loading model…/, { selector: "span[role=status]" })).toBeInTheDocument();
    expect(screen.getByRole("button", { name: "Stop" })).toBeInTheDocument();
    expect(fetchMock).toHaveBeenCalled();
  });

  it("says what to do when the project has nothing to chat with", async () => {
    mockApi({ "GET /api/health": okHealth, "GET /api/playground/models/": [] });
    renderApp("/p/demo/playground");
    expect(await screen.findByText("No models to chat with")).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Add a model" })).toHaveAttribute("href", "/p/demo/models");
  });
});
