import { describe, expect, it } from "vitest";

import { addExchange, applyEvent, isAnswering, messagesFor, statsLine, targetOf, type Column } from "./chat";

const two: Column[] = [
  { target: "model:1", turns: [] },
  { target: "checkpoint:7", turns: [] },
];

describe("chat", () => {
  it("writes each model's reply from its chunks, idempotently, until it is done", () => {
    let columns = addExchange(two, "3+4?", [
      { id: "a", state: "loading" },
      { id: "b", state: "queued" },
    ]);
    expect(columns.map((c) => c.turns.map((t) => t.state ?? t.role))).toEqual([
      ["user", "loading"],
      ["user", "queued"],
    ]);
    expect(isAnswering(columns)).toBe(true);
    columns = applyEvent(columns, { kind: "reply-status", reply: "a", state: "generating" });
    columns = applyEvent(columns, { kind: "chunk", reply: "a", offset: 0, text: "7" });
    columns = applyEvent(columns, { kind: "chunk", reply: "a", offset: 1, text: " is it" });
    columns = applyEvent(columns, { kind: "chunk", reply: "a", offset: 1, text: " is it" }); // replayed
    columns = applyEvent(columns, { kind: "done", reply: "a", finish_reason: "eos", tokens: 4, seconds: 0.5, first_token_s: 0.05 });
    columns = applyEvent(columns, { kind: "error", reply: "b", message: "out of memory" });
    const [a, b] = columns.map((c) => c.turns[1]!);
    expect([a!.content, a!.state, statsLine(a!.stats!)]).toEqual(["7 is it", "done", "4 tokens in 0.50 s (8 tok/s), first after 0.05 s"]);
    expect([b!.state, b!.error]).toEqual(["error", "out of memory"]);
    expect(isAnswering(columns)).toBe(false);
    // Each column continues its own conversation; a failed reply is not part of it.
    expect(messagesFor(columns[0]!, "and 5+5?")).toEqual([
      { role: "user", content: "3+4?" },
      { role: "assistant", content: "7 is it" },
      { role: "user", content: "and 5+5?" },
    ]);
    expect(messagesFor(columns[1]!, "again?")).toEqual([
      { role: "user", content: "3+4?" },
      { role: "user", content: "again?" },
    ]);
  });

  it("turns a picker's key into the API's target", () => {
    expect(targetOf("model:3")).toEqual({ model: 3 });
    expect(targetOf("checkpoint:12")).toEqual({ checkpoint: 12 });
  });
});
