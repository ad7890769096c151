/** Prompts stored as chat messages (verl's `prompt` column) for display. */
export type ChatMessage = { role: string; content: string };

export function chatMessages(value: unknown): ChatMessage[] | null {
  if (!Array.isArray(value) || value.length === 0) return null;
  const messages: ChatMessage[] = [];
  for (const item of value) {
    if (typeof item !== "object" || item === null) return null;
    const { role, content } = item as Record<string, unknown>;
    if (typeof role !== "string" || typeof content !== "string") return null;
    messages.push({ role, content });
  }
  return messages;
}

/** A cell value as text: strings as they are, anything else as compact JSON. */
export function cellText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value === null || value === undefined) return "";
  return JSON.stringify(value);
}
