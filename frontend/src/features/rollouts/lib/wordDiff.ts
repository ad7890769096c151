/** A word-level diff of two responses (the `diff` package's word tokeniser). */
import { diffWordsWithSpace } from "diff";

export type DiffKind = "same" | "added" | "removed";
export type DiffPart = { text: string; kind: DiffKind };

/** Parts of `before` and `after` in reading order; whitespace changes count. */
export function wordDiff(before: string, after: string): DiffPart[] {
  return diffWordsWithSpace(before, after).map((change) => ({
    text: change.value,
    kind: change.added ? "added" : change.removed ? "removed" : "same",
  }));
}

/** How many words each side changed (whitespace-only parts are not words). */
export function diffStats(parts: DiffPart[]): { added: number; removed: number } {
  const words = (text: string) => text.split(/\s+/).filter(Boolean).length;
  let added = 0;
  let removed = 0;
  for (const part of parts) {
    if (part.kind === "added") added += words(part.text);
    if (part.kind === "removed") removed += words(part.text);
  }
  return { added, removed };
}
