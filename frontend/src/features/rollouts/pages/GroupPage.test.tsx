import { screen, within } from "@testing-library/react";

import { jsonResponse, mockFetch, renderApp } from "../../../test/render";

function sample(id: number, score: number) {
  return {
    id, run: 3, attempt: 1, step: 2, split: "train", group_id: "g1", data_source: "arith",
    prompt: "What is 2 + 3?", response: `answer ${id}`, ground_truth: "5", score,
    components: { format: 1 }, advantage: 0, prompt_length: 5, response_length: 3,
    finish_reason: "eos", error: "", reward_version: null, reward_version_number: null, reward_function_name: null, superseded: false,
    created_at: "2026-01-01T00:00:00Z", labels: [], has_token_data: false,
  };  // prettier-ignore
}

function answerFor(samples: ReturnType<typeof sample>[]) {
  return (input: RequestInfo | URL) => {
    const url = String(input instanceof Request ? input.url : input);
    if (url.includes("/api/samples/group/")) {
      return jsonResponse({ run: 3, step: 2, group_id: "g1", count: samples.length, score_mean: 0, score_std: 0, samples });
    }
    return jsonResponse({ id: 3, name: "demo", status: "succeeded" });
  };
}

describe("the group view", () => {
  it("sorts samples by score, best first, and sees that the scores differ", async () => {
    const fetchMock = mockFetch(jsonResponse({}));
    fetchMock.mockImplementation(async (input) => answerFor([sample(1, 0), sample(2, 1), sample(3, 0.5)])(input));
    renderApp("/p/demo/runs/3/rollouts/group/2/g1");
    const cards = await screen.findAllByRole("article");
    expect(cards.map((c) => c.getAttribute("data-score"))).toEqual(["1", "0.5", "0"]);
    expect(within(cards[0]!).getByText("answer 2")).toBeInTheDocument();
    expect(screen.getByTestId("learning-signal")).toBeInTheDocument();
  });

  it("flags a group whose scores are all equal", async () => {
    const fetchMock = mockFetch(jsonResponse({}));
    fetchMock.mockImplementation(async (input) => answerFor([sample(1, 1), sample(2, 1)])(input));
    renderApp("/p/demo/runs/3/rollouts/group/2/g1");
    expect(await screen.findByTestId("zero-spread")).toHaveTextContent("GRPO learns nothing");
  });
});
