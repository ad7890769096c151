import { describe, expect, it } from "vitest";

import { textOnly } from "./plotly";
// One table for both escapers: this one and the HTML reports' (studio/reports/plotly_text.py,
// tested by tests/security/test_report_text.py).
import cases from "./plotly-text-cases.json";

describe("textOnly", () => {
  it.each(cases)("$name", ({ input, output }) => {
    expect(textOnly(input)).toEqual(output);
  });

  it("leaves what is not plain data alone (typed arrays, dates)", () => {
    const values = new Float64Array([1, 2]);
    const when = new Date(0);
    expect(textOnly({ y: values, x: [when] })).toEqual({ y: values, x: [when] });
  });
});
