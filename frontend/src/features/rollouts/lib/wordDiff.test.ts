import { diffStats, wordDiff } from "./wordDiff";

describe("wordDiff", () => {
  it("marks the changed word and keeps the rest", () => {
    const parts = wordDiff("The answer is 5.", "The answer is 7.");
    expect(parts.filter((p) => p.kind === "removed").map((p) => p.text)).toEqual(["5"]);
    expect(parts.filter((p) => p.kind === "added").map((p) => p.text)).toEqual(["7"]);
    expect(parts.filter((p) => p.kind !== "added").map((p) => p.text).join("")).toBe(
      "The answer is 5.",
    );
    expect(parts.filter((p) => p.kind !== "removed").map((p) => p.text).join("")).toBe(
      "The answer is 7.",
    );
  });

  it("reports identical responses as one unchanged part", () => {
    expect(wordDiff("same text", "same text")).toEqual([{ text: "same text", kind: "same" }]);
  });

  it("counts added and removed words", () => {
    const parts = wordDiff("2 + 3 = 5", "2 + 3 is 5 so the answer is 5");
    expect(diffStats(parts)).toEqual({ added: 6, removed: 1 });
  });

  it("sees a whitespace-only change", () => {
    const parts = wordDiff("a b", "a  b");
    expect(parts.some((p) => p.kind !== "same")).toBe(true);
  });
});
