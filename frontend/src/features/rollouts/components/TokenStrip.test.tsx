import { fireEvent, render, screen } from "@testing-library/react";

import { readTokenData } from "../lib/tokenData";
import { MISSING_COLOR } from "../lib/tokenColors";
import { MASKED_LEGEND, TokenStrip } from "./TokenStrip";

// An episode: the policy wrote "2+3", a tool answered "5" (mask 0), the policy answered.
const EPISODE = readTokenData({
  token_ids: [1, 2, 3, 4, 5],
  tokens: ["2+3", "<tool>", "5", "The", " 5"],
  logprobs: [-0.5, -9, -9, -0.1, -2],
  mask: [1, 0, 0, 1, 1],
})!;

function strip() {
  return Array.from(screen.getByTestId("token-strip").querySelectorAll<HTMLElement>("[data-index]"));
}

describe("the per-token view of a multi-turn episode", () => {
  it("marks tool and user tokens as not trained, with a legend", () => {
    render(<TokenStrip series={EPISODE} />);
    expect(strip().map((t) => t.dataset.masked === "true")).toEqual([false, true, true, false, false]);
    expect(screen.getByTestId("masked-legend")).toHaveTextContent(MASKED_LEGEND);
    expect(strip()[1]).toHaveAttribute("title", MASKED_LEGEND);
  });

  it("colours only the policy's tokens, on a scale their values span", () => {
    render(<TokenStrip series={EPISODE} />);
    const [policy, tool, , , last] = strip();
    expect(tool!.style.background).toBe("");
    expect(policy!.style.background).not.toBe("");
    expect(policy!.style.background).not.toBe(MISSING_COLOR);
    // The scale ends at the policy's lowest log-prob (-2), not at the tool's -9.
    expect(screen.getByTestId("token-legend")).toHaveTextContent("-2.00");
    expect(screen.getByTestId("token-legend")).not.toHaveTextContent("-9.00");
    expect(last!.title).toBe("logprobs -2");
  });

  it("reads the tokens one by one with the arrow keys, saying which are not trained", () => {
    render(<TokenStrip series={EPISODE} />);
    const tokens = screen.getByRole("group", { name: /arrow keys/ });
    tokens.focus();
    fireEvent.keyDown(tokens, { key: "ArrowRight" });
    expect(screen.getByTestId("token-details")).toHaveTextContent('#0 "2+3"');
    fireEvent.keyDown(tokens, { key: "ArrowRight" });
    expect(screen.getByTestId("token-details")).toHaveTextContent(`#1 "<tool>" · ${MASKED_LEGEND}`);
    fireEvent.keyDown(tokens, { key: "End" });
    expect(screen.getByTestId("token-details")).toHaveTextContent('#4 " 5"');
  });

  it("shows no mask legend for a single-turn sample", () => {
    const single = readTokenData({ tokens: ["a", "b"], logprobs: [-1, -2] })!;
    render(<TokenStrip series={single} />);
    expect(screen.queryByTestId("masked-legend")).toBeNull();
    expect(strip().some((t) => t.dataset.masked)).toBe(false);
  });
});
