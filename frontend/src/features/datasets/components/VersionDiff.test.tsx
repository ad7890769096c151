import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { jsonResponse, mockApi } from "../../../test/render";
import type { DatasetDiff, DatasetVersion } from "../api";
import { VersionDiff } from "./VersionDiff";

const version = (number: number, rows: number) =>
  ({ id: number, number, row_count: rows }) as unknown as DatasetVersion;

const diff: DatasetDiff = {
  from_number: 1,
  to_number: 2,
  columns: [{ name: "level", change: "added", before: null, after: "int64" }],
  counts: { added: 1, removed: 0, changed: 1, unchanged: 4 },
  total: 2,
  offset: 0,
  limit: 20,
  rows: [
    {
      key: "index 0",
      change: "changed",
      before: { prompt: "q0", answer: "1" },
      after: { prompt: "q0", answer: "one" },
      columns: ["answer"],
    },
    { key: "index 9", change: "added", before: null, after: { prompt: "q9", answer: "10" }, columns: [] },
  ],
  truncated: false,
  message: "",
  next_offset: 2,
};

function renderDiff() {
  const client = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  return render(
    <QueryClientProvider client={client}>
      <VersionDiff datasetId={7} versions={[version(2, 6), version(1, 6)]} />
    </QueryClientProvider>,
  );
}

afterEach(() => vi.unstubAllGlobals());

describe("VersionDiff", () => {
  it("compares the newest version with the one before and shows what changed", async () => {
    const asked: string[] = [];
    mockApi({
      "GET /api/datasets/7/diff/": (request: Request) => {
        asked.push(new URL(request.url).search);
        return jsonResponse(diff);
      },
    });
    renderDiff();
    const counts = await screen.findByTestId("diff-counts");
    expect(counts).toHaveTextContent("1 added");
    expect(counts).toHaveTextContent("1 changed");
    expect(screen.getByTestId("column-changes")).toHaveTextContent("level added (int64)");
    const [changed, added] = screen.getAllByTestId("diff-row");
    expect(within(changed!).getByText("one")).toBeInTheDocument();
    expect(within(changed!).getByText("1")).toBeInTheDocument();
    expect(added).toHaveAttribute("data-change", "added");
    expect(asked[0]).toContain("from=1");
    expect(asked[0]).toContain("to=2");

    fireEvent.change(screen.getByLabelText("Rows to show"), { target: { value: "added" } });
    await waitFor(() => expect(asked.at(-1)).toContain("change=added"));
  });

  it("says when a page was cut by its size in bytes and goes on from where it ended", async () => {
    const asked: string[] = [];
    const message = "Cut after 2 rows: the next would take this page past 4 MiB (RLSTUDIO_PREVIEW_MAX_BYTES).";
    mockApi({
      "GET /api/datasets/7/diff/": (request: Request) => {
        asked.push(new URL(request.url).search);
        return jsonResponse({ ...diff, total: 5, truncated: true, message, next_offset: 2 });
      },
    });
    renderDiff();
    expect(await screen.findByText(message)).toBeInTheDocument();
    fireEvent.click(screen.getByRole("button", { name: "Next" }));
    await waitFor(() => expect(asked.at(-1)).toContain("offset=2"));
  });
});
