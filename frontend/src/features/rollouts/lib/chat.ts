/** Prompts are stored as the rendered chat template; show them as messages again. */

export type ChatMessage = { role: string | null; content: string };

const CHATML = /<\|im_start\|>([^\n]*)\n([\s\S]*?)(?:<\|im_end\|>\n?|$)/g;

/** Splits ChatML (`<|im_start|>role\n...<|im_end|>`) into messages; other text is one message. */
export function chatMessages(text: string): ChatMessage[] {
  const messages: ChatMessage[] = [];
  let consumed = 0;
  for (const match of text.matchAll(CHATML)) {
    const before = text.slice(consumed, match.index).trim();
    if (before) messages.push({ role: null, content: before });
    const content = match[2] ?? "";
    if (match[1] || content) messages.push({ role: match[1] || null, content });
    consumed = match.index + match[0].length;
  }
  const rest = text.slice(consumed);
  if (rest.trim() || messages.length === 0) messages.push({ role: null, content: rest });
  return messages;
}

/** Whether a text is long enough to fold by default. */
export function isLong(text: string, lines = 12, chars = 1200): boolean {
  return text.length > chars || text.split("\n").length > lines;
}
