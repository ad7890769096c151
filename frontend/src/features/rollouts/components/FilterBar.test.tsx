import { fireEvent, render, screen } from "@testing-library/react";
import { vi } from "vitest";

import { NO_FILTERS } from "../lib/explorerQuery";
import { FilterBar } from "./FilterBar";

const MODELS = [
  { step: 1, label: "demo-model" },
  { step: 2, label: "demo @ step 2" },
  { step: 3, label: "demo @ step 4" },
];

describe("the explorer's model filter", () => {
  it("filters an evaluation's responses by model label, as that model's step", () => {
    const onChange = vi.fn();
    render(<FilterBar filters={NO_FILTERS} steps={[1, 2, 3]} live={false} onChange={onChange} models={MODELS} />);
    const select = screen.getByRole("combobox", { name: "Model" });
    expect(select).toHaveValue("");
    fireEvent.change(select, { target: { value: "3" } });
    expect(onChange).toHaveBeenLastCalledWith({ ...NO_FILTERS, stepMin: 3, stepMax: 3 });
  });

  it("shows the model of a one-step range, and no model filter for a training run", () => {
    const { rerender } = render(
      <FilterBar filters={{ ...NO_FILTERS, stepMin: 2, stepMax: 2 }} steps={[1, 2, 3]} live={false} onChange={vi.fn()} models={MODELS} />,
    );
    expect(screen.getByRole("combobox", { name: "Model" })).toHaveDisplayValue("demo @ step 2");
    rerender(<FilterBar filters={NO_FILTERS} steps={[1, 2, 3]} live={false} onChange={vi.fn()} />);
    expect(screen.queryByRole("combobox", { name: "Model" })).toBeNull();
  });
});
