import { describe, expect, it } from "vitest";

import { lineStarts, problemFromMessage, problemsToMarkers, type Problem } from "./markers";

const CODE = "import re\n\ndef compute_score(a):\n    return float(a\n";

function problem(line: number, column: number, endLine = line, endColumn = column + 1): Problem {
  return { line, column, end_line: endLine, end_column: endColumn, message: "m", severity: "error" };
}

describe("problem markers", () => {
  it("finds where each line starts", () => {
    expect(lineStarts("ab\n\ncd")).toEqual([0, 3, 4]);
  });

  it("puts a problem on its line and column", () => {
    const [marker] = problemsToMarkers(CODE, [problem(4, 17)]);
    expect(marker?.line).toBe(4);
    expect(CODE.slice(marker!.from, marker!.to)).toBe("(");
  });

  it("spans several lines when the problem does", () => {
    const [marker] = problemsToMarkers(CODE, [problem(3, 1, 4, 5)]);
    expect(CODE.slice(marker!.from, marker!.to)).toBe("def compute_score(a):\n    ");
  });

  it("clamps a problem past the end of its line or of the text to that line", () => {
    const [pastLine] = problemsToMarkers(CODE, [problem(1, 80)]);
    expect(pastLine!.from).toBe(9); // the end of "import re"
    const [pastText] = problemsToMarkers(CODE, [problem(40, 1)]);
    expect(pastText!.line).toBe(5);
    expect(pastText!.from).toBe(CODE.length);
    expect(pastText!.to).toBe(CODE.length);
  });

  it("reads the line and column of a refused save's message", () => {
    const parsed = problemFromMessage("code: syntax error at line 4, column 17: '(' was never closed");
    expect([parsed.line, parsed.column]).toEqual([4, 17]);
    expect(problemFromMessage("no function named 'compute_score'").line).toBe(1);
  });
});
