import { render, screen } from "@testing-library/react";
import { expect, test } from "vitest";

import { distinctErrors } from "./RewardErrors";
import { errorPercent, RewardErrorBadge } from "./RunStatus";

test("a share of failed rows never rounds to 0% or 100% when it is not", () => {
  expect([0.25, 0.004, 0.996, 1, 0.5049].map(errorPercent)).toEqual(["25", "<1", ">99", "100", "50"]);
});

test("the badge shows only when some rows failed", () => {
  const { container } = render(<RewardErrorBadge rate={0} />);
  expect(container).toBeEmptyDOMElement();
  render(<RewardErrorBadge rate={0.25} />);
  expect(screen.getByText("reward errors: 25% of rows")).toBeInTheDocument();
});

test("errors are grouped by their first line, most frequent first, keeping a traceback", () => {
  const frames = '\nTraceback (most recent call last):\n  File "reward.py", line 4, in compute_score';
  const errors = ["exception: KeyError: 'difficulty' (line 4)" + frames, "timeout: the call ran longer than 1 s", "exception: KeyError: 'difficulty' (line 4)" + frames];
  expect(distinctErrors(errors)).toEqual([
    { error: errors[0], count: 2 },
    { error: errors[1], count: 1 },
  ]);
});
