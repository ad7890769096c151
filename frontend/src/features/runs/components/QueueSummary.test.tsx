import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { QueueLine } from "./QueueSummary";

const base = { project: "alpha", max_streams_per_user: 12 };

describe("QueueLine", () => {
  it("shows the running jobs against the cap and what the next run waits for", () => {
    render(
      <QueueLine
        queue={{
          ...base,
          running_jobs: 2,
          max_running_jobs: 2,
          queued: [{ id: 7, name: "lr-sweep-3", position: 4, waiting_for: "its project's limit of 2 running jobs (2 running)" }],
        }}
      />,
    );
    const line = screen.getByRole("status", { name: "Queue" });
    expect(line.textContent).toContain("2 of 2 jobs running");
    expect(line.textContent).toContain("1 queued");
    expect(line.textContent).toContain("lr-sweep-3, waits for its project's limit of 2 running jobs (2 running)");
    expect(line.textContent).toContain("other projects' runs can start meanwhile");
  });

  it("says nothing when the project holds no job and queues none", () => {
    const { container } = render(<QueueLine queue={{ ...base, running_jobs: 0, max_running_jobs: 4, queued: [] }} />);
    expect(container.textContent).toBe("");
  });

  it("counts without a cap", () => {
    render(<QueueLine queue={{ ...base, running_jobs: 1, max_running_jobs: 0, queued: [] }} />);
    expect(screen.getByRole("status").textContent).toBe("1 job running");
  });
});
