import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router";

import type { Sample, Turn } from "../../samples/api";
import { Conversation } from "./Conversation";
import { SampleDetail } from "./SampleDetail";

function turn(role: Turn["role"], content: string, extra: Partial<Turn> = {}): Turn {
  return { role, content, tool_calls: [], name: null, error: null, reward: null, ...extra };
}

const EPISODE: Turn[] = [
  turn("assistant", "Let me compute.", {
    tool_calls: [{ name: "calc", arguments: { expr: "2+3", precision: 0 } }],
  }),
  turn("tool", "", { name: "calc", error: "SyntaxError: bad expr" }),
  turn("assistant", "", { tool_calls: [{ name: "calc", arguments: { expr: "2+3" } }], reward: -0.25 }),
  turn("tool", "5", { name: "calc", reward: 0 }),
  turn("user", "Answer in one line."),
  turn("assistant", "The answer is 5.", { reward: 1 }),
];

function sample(turns: Turn[] | null): Sample & { turns: Turn[] | null } {
  return {
    id: 7, run: 3, attempt: 1, step: 2, split: "train", group_id: "g1", data_source: "arith",
    prompt: "What is 2 + 3?", response: "FLAT RESPONSE TEXT", ground_truth: "5", score: 1,
    components: {}, reward_extra: {}, advantage: 0.5, prompt_length: 5, response_length: 30, finish_reason: "stop",
    error: "", reward_version: null, reward_version_number: null, reward_function_name: null, superseded: false, created_at: "2026-01-01T00:00:00Z",
    labels: [], has_token_data: true, num_turns: turns?.length ?? 0, turns,
  };  // prettier-ignore
}

function renderDetail(turns: Turn[] | null) {
  const client = new QueryClient();
  render(
    <QueryClientProvider client={client}>
      <MemoryRouter>
        <SampleDetail sample={sample(turns)} base="/p/demo/runs/3/rollouts" me="ada" />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe("the conversation of a multi-turn episode", () => {
  it("shows every turn in order with its role", () => {
    render(<Conversation turns={EPISODE} />);
    const turns = within(screen.getByTestId("conversation")).getAllByRole("listitem");
    expect(turns.map((t) => t.dataset.role)).toEqual(["assistant", "tool", "assistant", "tool", "user", "assistant"]);
    expect(turns[4]).toHaveTextContent("user");
    expect(turns[4]).toHaveTextContent("Answer in one line.");
    expect(turns[5]).toHaveTextContent("The answer is 5.");
    expect(screen.getByText("6 turns · 2 tool calls · 1 failed")).toBeInTheDocument();
  });

  it("shows a tool call's name and its arguments as indented JSON", () => {
    render(<Conversation turns={EPISODE} />);
    const [first] = screen.getAllByTestId("tool-call");
    expect(first).toHaveTextContent("calls calc");
    const args = screen.getAllByLabelText("arguments of calc")[0]!;
    expect(args.textContent).toBe('{\n  "expr": "2+3",\n  "precision": 0\n}');
  });

  it("shows a failed tool's error as an error, and a good result as its text", () => {
    render(<Conversation turns={EPISODE} />);
    const failed = screen.getByRole("listitem", { name: "Turn 2: tool result · calc (failed)" });
    expect(within(failed).getByRole("alert")).toHaveTextContent("SyntaxError: bad expr");
    const answered = screen.getByRole("listitem", { name: "Turn 4: tool result · calc" });
    expect(within(answered).queryByRole("alert")).toBeNull();
    expect(answered).toHaveTextContent("5");
  });

  it("puts a reward chip on the turns that have a reward, signed", () => {
    render(<Conversation turns={EPISODE} />);
    const chips = screen.getAllByTestId("turn-reward").map((chip) => chip.textContent);
    expect(chips).toEqual(["reward -0.250", "reward 0.000", "reward +1.000"]);
    const unrewarded = screen.getByRole("listitem", { name: "Turn 1: assistant" });
    expect(within(unrewarded).queryByTestId("turn-reward")).toBeNull();
  });

  it("replaces the flat response in the sample's detail, which keeps it folded away", () => {
    renderDetail(EPISODE);
    expect(screen.getByRole("heading", { name: "Episode" })).toBeInTheDocument();
    expect(screen.getByTestId("conversation")).toBeInTheDocument();
    expect(screen.getByText("6 turns", { selector: "span" })).toBeInTheDocument();
    expect(screen.getByText("The whole response as the model saw it")).toBeInTheDocument();
  });

  it("leaves a single-turn sample as it was: the response, no conversation", () => {
    renderDetail(null);
    expect(screen.getByRole("heading", { name: "Response" })).toBeInTheDocument();
    expect(screen.getByLabelText("response")).toHaveTextContent("FLAT RESPONSE TEXT");
    expect(screen.queryByTestId("conversation")).toBeNull();
  });
});
