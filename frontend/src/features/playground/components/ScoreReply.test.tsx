import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { ToastProvider } from "../../../components/Toast";
import { jsonResponse, mockApi, pageOf } from "../../../test/render";
import { ScoreReply } from "./ScoreReply";

const version = { id: 31, function: 3, number: 2, code_hash: "x", entrypoint: "compute_score", message: "", author: "ada", created_at: "2026-01-01T00:00:00Z" };
const exact = { id: 3, project: "demo", name: "exact", description: "", created_by: "ada", created_at: "2026-01-01T00:00:00Z", version_count: 2, latest_version: version };
const row = { index: 0, sample: null, finish_reason: "", data_source: "playground", prompt: null, solution_str: "15", ground_truth: "15", score: 1, components: {}, error: "", seconds: 0.01 };

describe("ScoreReply", () => {
  it("scores the reply with the latest version (or one picked) of a reward against the expected answer", async () => {
    const sent: unknown[] = [];
    mockApi({
      "GET /api/reward-functions/": pageOf([exact]),
      "GET /api/reward-functions/3/versions/": [version, { ...version, id: 30, number: 1 }],
      "POST /api/reward-test-runs/": (request: Request) => {
        void request.clone().json().then((body) => sent.push(body));
        return jsonResponse({ id: 5, status: "queued" }, 202);
      },
      "GET /api/reward-test-runs/5/": { id: 5, status: "succeeded", error: "", result: { rows: [row], summary: {}, isolation: {} } },
    });
    const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
    render(
      <QueryClientProvider client={client}>
        <ToastProvider>
          <ScoreReply slug="demo" reply="15" />
        </ToastProvider>
      </QueryClientProvider>,
    );
    fireEvent.click(screen.getByRole("button", { name: "Score with a reward" }));
    expect(await screen.findByRole("option", { name: "exact" })).toBeInTheDocument();
    expect(await screen.findByRole("option", { name: "v1" })).toBeInTheDocument(); // any version
    expect(screen.getByRole("combobox", { name: "Reward version" })).toHaveValue("31"); // the latest
    fireEvent.change(screen.getByRole("textbox", { name: "Expected answer" }), { target: { value: "15" } });
    fireEvent.click(screen.getByRole("button", { name: "Score" }));
    expect(await screen.findByTestId("reply-score")).toHaveTextContent("score 1.000");
    await waitFor(() => expect(sent).toHaveLength(1));
    expect(sent[0]).toMatchObject({ reward_version: 31, source: "completions", completions: [{ solution_str: "15", ground_truth: "15" }] });
  });
});
