import { defaultMetric, readTokenData } from "./tokenData";

describe("readTokenData", () => {
  it("finds texts, numeric metrics and the loss mask", () => {
    const series = readTokenData({
      token_ids: [5, 6, 7],
      tokens: ["The", " answer", "<|im_end|>"],
      logprobs: [-0.1, -2.5, -0.01],
      advantages: [0.5, 0.5, 0.5],
      entropy: [1, null, 0.2],
      loss_mask: [1, 1, 0],
    });
    expect(series?.tokens).toEqual(["The", " answer", "<|im_end|>"]);
    expect(Object.keys(series?.metrics ?? {})).toEqual(["logprobs", "advantages", "entropy"]);
    expect(series?.metrics.entropy).toEqual([1, null, 0.2]);
    expect(series?.lossMask).toEqual([true, true, false]);
    expect(series && defaultMetric(series)).toBe("logprobs");
  });

  it("shows token ids when the texts were not recorded", () => {
    expect(readTokenData({ token_ids: [9, 10], logprobs: [-1, -1] })?.tokens).toEqual(["⟨9⟩", "⟨10⟩"]);
  });

  it("returns null for missing or empty token data", () => {
    expect(readTokenData(null)).toBeNull();
    expect(readTokenData({ token_ids: [] })).toBeNull();
  });
});
