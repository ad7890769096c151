import { render, screen, within } from "@testing-library/react";

import { ExtraInfo, extraEntries } from "./ExtraInfo";

test("strings show as written and everything else as compact JSON, in return order", () => {
  expect(extraEntries({ pred: "42", none: null, xs: [1, "a"], d: { ok: true } })).toEqual([
    ["pred", "42"],
    ["none", "null"],
    ["xs", '[1,"a"]'],
    ["d", '{"ok":true}'],
  ]);
  expect(extraEntries(undefined)).toEqual([]);
});

test("it lists each key with its value, and renders nothing without extra info", () => {
  const { container, rerender } = render(<ExtraInfo extra={{ pred: "42", numbers: ["6", "7"] }} />);
  const box = within(screen.getByLabelText("Extra info"));
  expect(box.getByText("pred")).toBeInTheDocument();
  expect(box.getByText("42")).toBeInTheDocument();
  expect(box.getByText('["6","7"]')).toBeInTheDocument();
  rerender(<ExtraInfo extra={{}} />);
  expect(container).toBeEmptyDOMElement();
});
