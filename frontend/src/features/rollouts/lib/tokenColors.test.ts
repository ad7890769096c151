import { colorOf, intensity, legendStops, MISSING_COLOR, scaleFor, visibleToken } from "./tokenColors";

describe("scaleFor", () => {
  it("gives advantages a diverging scale symmetric around zero", () => {
    const scale = scaleFor("advantages", [-0.5, 0.2, 2]);
    expect(scale).toEqual({ kind: "diverging", min: -2, max: 2, emphasiseLow: false });
  });

  it("keeps advantages diverging even when one response is all positive", () => {
    expect(scaleFor("advantages", [0.1, 0.4]).kind).toBe("diverging");
  });

  it("gives log-probabilities a sequential scale whose low end is strong", () => {
    const scale = scaleFor("logprobs", [-7, -0.1, 0]);
    expect(scale).toEqual({ kind: "sequential", min: -7, max: 0, emphasiseLow: true });
  });

  it("gives entropy a sequential scale whose high end is strong", () => {
    expect(scaleFor("entropy", [0, 3.2])).toEqual({
      kind: "sequential",
      min: 0,
      max: 3.2,
      emphasiseLow: false,
    });
  });

  it("ignores missing and non-finite values when finding the range", () => {
    expect(scaleFor("entropy", [null, Number.NaN, 1, 2, Infinity])).toMatchObject({ min: 1, max: 2 });
  });
});

describe("colorOf", () => {
  it("colours negative advantages red, positive blue and zero white", () => {
    const scale = scaleFor("advantages", [-1, 1]);
    expect(colorOf(scale, -1)).toBe("rgb(217, 45, 32)");
    expect(colorOf(scale, 1)).toBe("rgb(21, 112, 239)");
    expect(colorOf(scale, 0)).toBe("rgb(255, 255, 255)");
  });

  it("makes an unlikely token stronger than a likely one", () => {
    const scale = scaleFor("logprobs", [-8, 0]);
    expect(intensity(scale, -8)).toBe(1);
    expect(intensity(scale, 0)).toBe(0);
    expect(colorOf(scale, -8)).toBe("rgb(121, 40, 202)");
  });

  it("greys out tokens without a value", () => {
    const scale = scaleFor("entropy", [0, 1]);
    expect(colorOf(scale, null)).toBe(MISSING_COLOR);
    expect(colorOf(scale, Number.NaN)).toBe(MISSING_COLOR);
  });

  it("clamps values outside the scale and survives a flat range", () => {
    const flat = scaleFor("entropy", [1, 1]);
    expect(colorOf(flat, 1)).toBe("rgb(255, 255, 255)");
    const scale = scaleFor("advantages", [-1, 1]);
    expect(colorOf(scale, 5)).toBe(colorOf(scale, 1));
  });
});

describe("legendStops", () => {
  it("runs from the scale's low end to its high end", () => {
    const stops = legendStops(scaleFor("advantages", [-2, 2]), 3);
    expect(stops.map((s) => s.value)).toEqual([-2, 0, 2]);
    expect(stops[1]!.color).toBe("rgb(255, 255, 255)");
  });
});

describe("visibleToken", () => {
  it("shows spaces, tabs and newlines", () => {
    expect(visibleToken(" a\tb\n")).toBe("·a→b↵");
    expect(visibleToken("<|im_end|>")).toBe("<|im_end|>");
  });
});
