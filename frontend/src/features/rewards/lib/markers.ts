/**
 * Problems found in reward code (1-based line and column, from POST
 * /api/reward-checks/) as editor markers: character offsets into the text, clamped
 * so a problem past the end of a line or of the text still shows, on its line.
 */
import type { Schemas } from "../../../api/client";

export type Problem = Schemas["Problem"];

export type Marker = {
  from: number;
  to: number;
  line: number;
  severity: "error" | "warning";
  message: string;
};

/** Offset of the first character of each line (line 1 at index 0). */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === "\n") starts.push(i + 1);
  }
  return starts;
}

function offsetOf(text: string, starts: number[], line: number, column: number): number {
  const index = Math.min(Math.max(line, 1), starts.length) - 1;
  const start = starts[index] ?? 0;
  const next = starts[index + 1];
  const end = next === undefined ? text.length : next - 1; // before the newline
  return Math.min(start + Math.max(column, 1) - 1, end);
}

export function problemsToMarkers(text: string, problems: readonly Problem[]): Marker[] {
  const starts = lineStarts(text);
  return problems.map((problem) => {
    const line = Math.min(Math.max(problem.line, 1), starts.length);
    const from = offsetOf(text, starts, problem.line, problem.column);
    let to = offsetOf(text, starts, problem.end_line, problem.end_column);
    if (to <= from) {
      const next = starts[line];
      const lineEnd = next === undefined ? text.length : next - 1;
      to = Math.min(from + 1, lineEnd);
    }
    return {
      from,
      to: Math.max(to, from),
      line,
      severity: problem.severity,
      message: problem.message,
    };
  });
}

/**
 * A save refused with a message such as "syntax error at line 4, column 17: ..." (the
 * server runs the same check) as a problem, for when the check itself was skipped.
 */
export function problemFromMessage(message: string): Problem {
  const match = /line (\d+)(?:, column (\d+))?/.exec(message);
  const line = match ? Number(match[1]) : 1;
  const column = match?.[2] ? Number(match[2]) : 1;
  return {
    line,
    column,
    end_line: line,
    end_column: column + 1,
    message,
    severity: "error",
  };
}
