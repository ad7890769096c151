/** "1 turn", "3 turns": a count with its noun agreeing. */
export function countOf(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
