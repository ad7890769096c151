import { render, screen } from "@testing-library/react";
import { describe, expect, it } from "vitest";

import { RunTraceback } from "./RunTraceback";

const CODE = ["def compute_score(data_source, solution_str, ground_truth, extra_info=None):", "    total = 0", "    return 1 / total", ""].join("\n");
const TRACEBACK = `Traceback (most recent call last):
  File "/app/trainer/loop.py", line 80, in train
  File "reward.py", line 3, in compute_score
ZeroDivisionError: division by zero`;

describe("RunTraceback", () => {
  it("marks the user's frame and shows that line of the reward code", () => {
    render(<RunTraceback text={TRACEBACK} code={CODE} />);
    const source = screen.getByRole("figure", { name: "reward.py, line 3" });
    const current = source.querySelector('[data-current="true"]');
    expect(current?.textContent).toBe("3    return 1 / total");
    const marked = screen.getByRole("region", { name: "Why the run failed" }).querySelectorAll("mark");
    expect([...marked].map((m) => m.textContent)).toEqual(['  File "reward.py", line 3, in compute_score']);
  });

  it("shows the traceback alone when it does not point at the user's code", () => {
    render(<RunTraceback text={"Traceback (most recent call last):\nRuntimeError: loss is nan"} code={CODE} />);
    expect(screen.queryByRole("figure")).toBeNull();
    expect(screen.getByText(/loss is nan/)).toBeTruthy();
  });
});
