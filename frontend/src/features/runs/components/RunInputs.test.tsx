import { render, screen } from "@testing-library/react";
import { createMemoryRouter, RouterProvider } from "react-router";
import { describe, expect, it } from "vitest";

import type { RunInputs as Inputs } from "../api";
import { suggestedName } from "../pages/NewRunPage";
import { differingInputs, inputsLine, RunInputs } from "./RunInputs";

const inputs: Inputs = {
  model: { id: 4, name: "demo-model", kind: "demo" },
  dataset: { dataset: 2, name: "arith", version: 12, number: 3, rows: 1000 },
  validation: "held_out",
  validation_dataset: { dataset: 2, name: "arith", version: 12, number: 3, rows: 1000 },
  reward: { function: 5, name: "arith-exact", version: 7, number: 2, kwargs: {} },
  reward_models: [],
  critic_model: null,
  lora_adapter: null,
  provenance: null,
};

function show(value: Inputs) {
  const router = createMemoryRouter([{ path: "*", element: <RunInputs inputs={value} slug="demo" /> }]);
  return render(<RouterProvider router={router} />);
}

describe("a run's inputs", () => {
  it("list the model, the dataset version and the reward version, linked", () => {
    show(inputs);
    expect(screen.getByText("demo-model")).toBeInTheDocument();
    expect(screen.getAllByRole("link", { name: "arith v3" })[0]).toHaveAttribute("href", "/p/demo/datasets/2");
    expect(screen.getByRole("link", { name: "arith-exact v2" })).toHaveAttribute("href", "/p/demo/reward-functions/5");
    expect(screen.getByText(/held-out rows of/)).toBeInTheDocument();
  });

  it("name a built-in reward and a provenance record's paths, not relaunchable", () => {
    const missing = "data.train_files: var/data/train.jsonl is gone";
    show({ ...inputs, dataset: null, validation: "none", validation_dataset: null, reward: { function: null, name: "arith", version: null, number: null, kwargs: {} }, provenance: { paths: { "data.train_files": ["var/data/train.jsonl"] }, missing: [missing] } });
    expect(screen.getByText("built-in: arith")).toBeInTheDocument();
    expect(screen.getByText("Provenance")).toBeInTheDocument();
    expect(screen.getByText(/\["var\/data\/train.jsonl"\]/)).toBeInTheDocument();
    expect(screen.getByText(`${missing}: a record only, not relaunchable`)).toBeInTheDocument();
  });

  it("show the keyword arguments the reward is called with, and tell runs apart by them", () => {
    const withKwargs = { ...inputs, reward: { ...inputs.reward, kwargs: { format_score: 0.1 } } };
    show(withKwargs);
    expect(screen.getByText('{"format_score":0.1}')).toBeInTheDocument();
    expect([...differingInputs([inputs, withKwargs], "demo")]).toEqual(["reward"]);
  });

  it("fit on one line for the runs list", () => {
    expect(inputsLine(inputs)).toBe("arith v3 · reward arith-exact v2");
    expect(inputsLine({ ...inputs, reward: { function: null, name: "arith", version: null, number: null, kwargs: {} } })).toBe("arith v3 · built-in reward arith");
  });

  it("say which differ between runs", () => {
    const other = { ...inputs, reward: { ...inputs.reward, version: 8, number: 3 } };
    expect([...differingInputs([inputs, other], "demo")]).toEqual(["reward"]);
    expect(differingInputs([inputs, inputs], "demo").size).toBe(0);
  });

  it("suggest a run name from the dataset, the preset and the time", () => {
    expect(suggestedName("Arith Sums", "grpo-tiny-arith", new Date(2026, 2, 7, 9, 5))).toBe("arith-sums-grpo-tiny-arith-0307-0905");
    expect(suggestedName(null, "grpo-tiny-arith", new Date(2026, 11, 31, 23, 59))).toBe("grpo-tiny-arith-1231-2359");
  });
});
