import { describe, expect, it } from "vitest";

import { textOnly } from "./plotly";

describe("textOnly", () => {
  it("turns markup a metric key or run name carries into text", () => {
    const layout = { title: { text: 'reward/<a href="https://evil.example">click</a>/mean' } };
    expect(textOnly(layout).title.text).toBe('reward/&lt;a href="https://evil.example"&gt;click&lt;/a&gt;/mean');
    const data = [{ name: "run <b>x</b> & y", x: [1, 2], y: [0.5, 1], customdata: ["<br>"] }];
    const safe = textOnly(data)[0];
    expect(safe?.name).toBe("run &lt;b&gt;x&lt;/b&gt; &amp; y");
    expect(safe?.customdata).toEqual(["&lt;br&gt;"]);
    expect(safe?.x).toEqual([1, 2]);
  });

  it("keeps our own hover templates as written", () => {
    const trace = { hovertemplate: "token %{x}: %{y}<extra></extra>", mode: "lines" };
    expect(textOnly(trace)).toEqual(trace);
  });
});
