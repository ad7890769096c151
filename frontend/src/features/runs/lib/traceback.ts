/**
 * Where a traceback points at the user's reward code. The reward runs as `reward.py`
 * (trainer/rewards/sandbox/call.py), so its frames read `File "reward.py", line N`; the
 * trainer's one-line summaries of a reward error end in `(line N)`.
 */

const FRAME = /File "(?:[^"]*\/)?reward\.py", line (\d+)/;
const SUMMARY = /reward code.*\(line (\d+)\)\s*$|^(?:\w+\.)*\w+(?:Error|Exception): .*\(line (\d+)\)\s*$/;

/** The line of the user's code a traceback line names, or null. */
export function userLineOf(text: string): number | null {
  const match = FRAME.exec(text) ?? SUMMARY.exec(text);
  if (!match) return null;
  const line = Number(match[1] ?? match[2]);
  return Number.isInteger(line) && line > 0 ? line : null;
}

/** The user's line the whole traceback ends at: the last one named (the innermost frame). */
export function lastUserLine(traceback: string): number | null {
  let found: number | null = null;
  for (const line of traceback.split("\n")) found = userLineOf(line) ?? found;
  return found;
}
