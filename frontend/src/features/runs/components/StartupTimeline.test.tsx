import { render, screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import type { RunDetail, RunStatus } from "../api";
import type { PhaseName, Startup } from "../lib/startup";
import { StartupTimeline } from "./StartupTimeline";

const T0 = 1_760_000_000;
const ALL: PhaseName[] = [
  "created",
  "dispatched",
  "claimed",
  "submitted",
  "process_started",
  "bootstrap_done",
  "imports_done",
  "model_loaded",
  "data_loaded",
  "first_validation",
  "first_rollout",
  "first_step",
  "first_metric_reported",
  "first_metric_stored",
];

/** The API's shape for phases reached at these offsets (in the order given), the rest not. */
function startupOf(reached: [PhaseName, number][], total: number | null = null): Startup {
  const phases = reached.map(([name, offset], i) => ({ name, at: T0 + offset, seconds: i === 0 ? null : offset - (reached[i - 1]?.[1] ?? 0), offset_s: offset }));
  const rest = ALL.filter((name) => !reached.some(([n]) => n === name)).map((name) => ({ name, at: null, seconds: null, offset_s: null }));
  return { phases: [...phases, ...rest], total_s: total };
}

function runOf(status: RunStatus, startups: (Startup | null)[]): RunDetail {
  const attempts = startups.map((startup, i) => ({ number: i + 1, startup }));
  return { id: 7, name: "arith", status, attempts } as unknown as RunDetail;
}

describe("StartupTimeline", () => {
  it("shows every phase's duration with its bar, and the total from Create to the first metric", () => {
    const startup = startupOf(
      [
        ["created", 0],
        ["dispatched", 0.4],
        ["claimed", 0.45],
        ["submitted", 0.6],
        ["process_started", 1.5],
        ["bootstrap_done", 2.1],
        ["imports_done", 5.6],
        ["model_loaded", 5.9],
        ["data_loaded", 6.1],
        ["first_validation", 6.8],
        ["first_metric_reported", 6.81],
        ["first_metric_stored", 6.9],
        ["first_rollout", 7.3],
        ["first_step", 7.6],
      ],
      6.9,
    );
    render(<StartupTimeline run={runOf("running", [startup])} />);
    expect(screen.getByText(/Create to first metric/).textContent).toBe("Create to first metric: 6.9 s");
    const table = screen.getByRole("table", { name: "Startup phases of attempt 1" });
    const imports = within(table).getByRole("row", { name: /Training libraries imported/ });
    expect(imports.textContent).toContain("3.5 s"); // 5.6 - 2.1
    expect(imports.textContent).toContain("5.6 s"); // since Create
    // The longest phase has the widest bar, placed where it ran on the shared scale.
    const bar = imports.querySelector<HTMLElement>("[aria-hidden=true] > span");
    expect(bar?.style.left).toBe(`${(2.1 / 7.6) * 100}%`);
    // Every phase is reached here: none waits, none is left out.
    expect(within(table).queryByText("waiting…")).toBeNull();
    expect(within(table).getAllByRole("row")).toHaveLength(ALL.length + 1);
  });

  it("shows the phases reached so far while the run starts, and what it waits for next", () => {
    const startup = startupOf([
      ["created", 0],
      ["dispatched", 0.3],
      ["claimed", 0.35],
    ]);
    render(<StartupTimeline run={runOf("starting", [startup])} />);
    expect(screen.getByText(/so far/)).toBeTruthy();
    const table = screen.getByRole("table");
    expect(within(table).getByRole("row", { name: /Accepted by Ray/ }).textContent).toContain("waiting…");
    expect(within(table).getByRole("row", { name: /Picked by the queue/ }).getAttribute("data-reached")).toBe("true");
  });

  it("says when no timeline was recorded, and when a queued run has none yet", () => {
    const { unmount } = render(<StartupTimeline run={runOf("succeeded", [null])} />);
    expect(screen.getByText(/No startup timeline recorded/)).toBeTruthy();
    expect(screen.queryByRole("table")).toBeNull();
    unmount();
    render(<StartupTimeline run={runOf("queued", [])} />);
    expect(screen.getByText(/Queued: the timeline begins when the queue starts this run/)).toBeTruthy();
  });

  it("shows a resumed run's earlier attempt as it ended while the new one waits in the queue", () => {
    const startup = startupOf([
      ["created", 0],
      ["claimed", 0.5],
    ]);
    render(<StartupTimeline run={runOf("queued", [startup])} />);
    expect(screen.getByText(/Queued again: attempt 2's timeline begins/)).toBeTruthy();
    expect(screen.getByText("Ended before its first metric was stored.")).toBeTruthy();
    expect(screen.queryByText("waiting…")).toBeNull();
  });

  it("marks the phases a run that ended early never reached", () => {
    const startup = startupOf([
      ["created", 0],
      ["claimed", 0.5],
      ["submitted", 0.7],
    ]);
    render(<StartupTimeline run={runOf("failed", [startup])} />);
    expect(screen.getByText("Ended before its first metric was stored.")).toBeTruthy();
    expect(screen.getByRole("row", { name: /Model loaded/ }).textContent).toContain("not reached");
  });
});
