import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { createMemoryRouter, RouterProvider } from "react-router";
import { afterEach, describe, expect, it, vi } from "vitest";

import { ToastProvider } from "../../../components/Toast";
import { demoProject, jsonResponse, mockApi } from "../../../test/render";
import { projectKeys, type Role } from "../../projects/api";
import type { RunDetail, RunStatus } from "../api";
import { freedWords, RunStorageActions } from "./RunStorageActions";

const MiB = 1024 * 1024;

function runOf(status: RunStatus, extra: Partial<RunDetail> = {}): RunDetail {
  return { id: 7, name: "lr sweep", kind: "train", status, archived_at: null, storage_bytes: 3 * MiB, ...extra } as RunDetail;
}

function renderActions(run: RunDetail, role: Role = "member") {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  queryClient.setQueryData(projectKeys.all, [{ ...demoProject, role }]);
  const router = createMemoryRouter(
    [
      { path: "/p/:slug/runs/:runId", element: <RunStorageActions run={run} slug="demo" /> },
      { path: "/p/:slug/runs", element: <p>Runs list</p> },
    ],
    { initialEntries: [`/p/demo/runs/${run.id}`] },
  );
  render(
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <RouterProvider router={router} />
      </ToastProvider>
    </QueryClientProvider>,
  );
  return router;
}

afterEach(() => vi.unstubAllGlobals());

describe("RunStorageActions", () => {
  it("deletes an ended run after saying what it frees, then goes to the runs list", async () => {
    const fetchMock = mockApi({ "DELETE /api/runs/7/": { id: 7, name: "lr sweep", freed_bytes: 3 * MiB } });
    const router = renderActions(runOf("failed"));
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete run #7?" });
    expect(dialog.textContent).toContain("frees 3.0 MiB of checkpoints and files");
    fireEvent.click(screen.getByRole("button", { name: "Delete run" }));
    await waitFor(() => expect(router.state.location.pathname).toBe("/p/demo/runs"));
    expect(await screen.findByText("Deleted “lr sweep”: 3.0 MiB freed.")).toBeInTheDocument();
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it("offers to cancel a live run first, and deletes nothing", async () => {
    const fetchMock = mockApi({ "POST /api/runs/7/cancel/": runOf("cancelling") });
    renderActions(runOf("running"));
    expect(screen.queryByRole("button", { name: "Archive" })).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    const dialog = screen.getByRole("alertdialog", { name: "Run #7 is running" });
    expect(dialog.textContent).toContain("Cancel “lr sweep” first");
    fireEvent.click(screen.getByRole("button", { name: "Keep it" }));
    expect(screen.queryByRole("alertdialog")).toBeNull();
    expect(fetchMock).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    fireEvent.click(screen.getByRole("button", { name: "Cancel run" }));
    await waitFor(() => expect(fetchMock).toHaveBeenCalledTimes(1));
    expect((fetchMock.mock.calls[0]?.[0] as Request).url).toMatch(/\/api\/runs\/7\/cancel\/$/);
  });

  it("offers no delete while a run is cancelling", () => {
    renderActions(runOf("cancelling"));
    expect(screen.queryByRole("button", { name: "Delete" })).toBeNull();
  });

  it("shows the server's refusal, naming what holds the run", async () => {
    const message = "Run 7 ('lr sweep') can't be deleted: models registered from its checkpoints: 'tuned' (id 3, step 4); delete them first.";
    mockApi({ "DELETE /api/runs/7/": () => jsonResponse({ error: { code: "conflict", message } }, 409) });
    const router = renderActions(runOf("succeeded"));
    fireEvent.click(screen.getByRole("button", { name: "Delete" }));
    fireEvent.click(screen.getByRole("button", { name: "Delete run" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("'tuned' (id 3, step 4)");
    expect(router.state.location.pathname).toBe("/p/demo/runs/7");
  });

  it("archives an ended run, and offers to unarchive an archived one", async () => {
    const fetchMock = mockApi({ "POST /api/runs/7/archive/": runOf("cancelled", { archived_at: "2026-11-28T18:00:00Z" }) });
    renderActions(runOf("cancelled"));
    fireEvent.click(screen.getByRole("button", { name: "Archive" }));
    expect(await screen.findByText(/Archiving frees no storage/)).toBeInTheDocument();
    expect(fetchMock).toHaveBeenCalledTimes(1);
  });

  it("is not offered to viewers", () => {
    renderActions(runOf("failed"), "viewer");
    expect(screen.queryByRole("button", { name: "Delete" })).toBeNull();
    expect(screen.queryByRole("button", { name: "Archive" })).toBeNull();
  });
});

describe("freedWords", () => {
  it("says the measured size, or that it was not measured", () => {
    expect(freedWords({ storage_bytes: 1536 })).toBe("1.5 KiB of checkpoints and files");
    expect(freedWords({ storage_bytes: 0 })).toBe("no files (it has none on this server)");
    expect(freedWords({ storage_bytes: null })).toBe("its files (not measured yet)");
  });
});
