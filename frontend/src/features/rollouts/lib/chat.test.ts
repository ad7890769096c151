import { chatMessages, isLong } from "./chat";

describe("chatMessages", () => {
  it("splits a ChatML prompt into role messages, leaving the open assistant turn out", () => {
    const text =
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nWhat is 2 + 3?<|im_end|>\n<|im_start|>assistant\n";
    expect(chatMessages(text)).toEqual([
      { role: "system", content: "Be brief." },
      { role: "user", content: "What is 2 + 3?" },
      { role: "assistant", content: "" },
    ]);
  });

  it("keeps plain text as one message without a role", () => {
    expect(chatMessages("What is 2 + 3?")).toEqual([{ role: null, content: "What is 2 + 3?" }]);
  });

  it("folds long text", () => {
    expect(isLong("a\n".repeat(20))).toBe(true);
    expect(isLong("short")).toBe(false);
  });
});
