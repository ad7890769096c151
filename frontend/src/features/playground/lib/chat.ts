/**
 * The playground's conversations, as pure functions: one column per model, each with
 * its own history (two models answer the same message, but each continues its own
 * conversation), and the exchange's stream events applied to the reply they name.
 */

export type ReplyState = "loading" | "queued" | "generating" | "done" | "error" | "stopped";

export type Turn = {
  role: "user" | "assistant";
  content: string;
  /** An assistant turn's reply id and progress; user turns have neither. */
  reply?: string;
  state?: ReplyState;
  error?: string;
  stats?: { tokens: number; seconds: number; firstTokenS: number; finishReason: string };
};

export type Column = { target: string; turns: Turn[] };

export type StreamEvent =
  | { kind: "reply-status"; reply: string; state: "loading" | "queued" | "generating" | "failed" }
  | { kind: "chunk"; reply: string; offset: number; text: string }
  | { kind: "done"; reply: string; finish_reason: string; tokens: number; seconds: number; first_token_s: number }
  | { kind: "error"; reply: string; message: string };

/** `model:3` -> `{ model: 3 }`: the API's target from a picker's key. */
export function targetOf(key: string): { model: number } | { checkpoint: number } {
  const [kind, id] = key.split(":");
  return kind === "checkpoint" ? { checkpoint: Number(id) } : { model: Number(id) };
}

/** The messages a column sends: its history plus the new user message (replies that
 * failed are left out: the model never said them). */
export function messagesFor(column: Column, message: string): { role: "user" | "assistant"; content: string }[] {
  const history = column.turns
    .filter((t) => t.role === "user" || (t.state !== "error" && t.content))
    .map((t) => ({ role: t.role, content: t.content }));
  return [...history, { role: "user", content: message }];
}

/** Each column with the user's message and an empty reply waiting for `replies[i]`. */
export function addExchange(columns: Column[], message: string, replies: { id: string; state: string }[]): Column[] {
  return columns.map((column, i) => {
    const reply = replies[i];
    const waiting: Turn = {
      role: "assistant",
      content: "",
      reply: reply?.id,
      state: reply?.state === "failed" ? "error" : reply?.state === "queued" ? "queued" : "loading",
    };
    return { ...column, turns: [...column.turns, { role: "user", content: message }, waiting] };
  });
}

function updateReply(columns: Column[], reply: string, update: (turn: Turn) => Turn): Column[] {
  return columns.map((column) =>
    column.turns.some((t) => t.reply === reply) ? { ...column, turns: column.turns.map((t) => (t.reply === reply ? update(t) : t)) } : column,
  );
}

export function applyEvent(columns: Column[], event: StreamEvent): Column[] {
  switch (event.kind) {
    case "reply-status":
      return updateReply(columns, event.reply, (t) =>
        event.state === "failed" ? { ...t, state: "error" } : t.state === "done" ? t : { ...t, state: event.state },
      );
    case "chunk":
      // Text from `offset`: a chunk seen twice (a reconnect's replay) changes nothing.
      return updateReply(columns, event.reply, (t) => ({ ...t, state: t.state === "done" ? t.state : "generating", content: t.content.slice(0, event.offset) + event.text }));
    case "done":
      return updateReply(columns, event.reply, (t) => ({
        ...t,
        state: event.finish_reason === "stopped" ? "stopped" : "done",
        stats: { tokens: event.tokens, seconds: event.seconds, firstTokenS: event.first_token_s, finishReason: event.finish_reason },
      }));
    case "error":
      return updateReply(columns, event.reply, (t) => ({ ...t, state: "error", error: event.message }));
  }
}

/** Whether any reply is still on its way (the composer waits; Stop is offered). */
export function isAnswering(columns: Column[]): boolean {
  return columns.some((c) => c.turns.some((t) => t.state === "loading" || t.state === "queued" || t.state === "generating"));
}

/** "64 tokens in 0.41 s (156 tok/s), first after 0.03 s" */
export function statsLine(stats: NonNullable<Turn["stats"]>): string {
  const rate = stats.seconds > 0 ? ` (${Math.round(stats.tokens / stats.seconds)} tok/s)` : "";
  const ended = stats.finishReason === "length" ? ", stopped at the length limit" : "";
  return `${stats.tokens} tokens in ${stats.seconds.toFixed(2)} s${rate}, first after ${stats.firstTokenS.toFixed(2)} s${ended}`;
}
