import { fireEvent, render, screen, within } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, it, vi } from "vitest";

import schema from "../fixtures/config-schema.json";
import presets from "../fixtures/presets.json";
import type { ConfigTree } from "../lib/configDiff";
import { getAt, placeErrors, sectionsOf, setAt } from "../lib/configSchema";
import { ConfigForm } from "./ConfigForm";

// The real RunConfig schema and presets, fetched from the studio (see fixtures/README).
const sections = sectionsOf(schema as Record<string, unknown>);
const preset = (presets.find((p) => p.name === "grpo-tiny-arith")?.config ?? {}) as ConfigTree;

function Harness({ errors = {}, onChange }: { errors?: Record<string, string[]>; onChange?: (path: string, value: unknown) => void }) {
  const [value, setValue] = useState<ConfigTree>(preset);
  return (
    <ConfigForm
      sections={sections}
      value={value}
      base={preset}
      errors={errors}
      baseName="preset grpo-tiny-arith"
      onChange={(path, next) => {
        onChange?.(path, next);
        setValue((v) => setAt(v, path, next));
      }}
    />
  );
}

/** Opens every section as a click on its summary does: a closed section renders no fields. */
function openAll(container: HTMLElement) {
  container.querySelectorAll("details").forEach((d) => {
    d.open = true;
    fireEvent(d, new Event("toggle"));
  });
}

describe("the generated run form", () => {
  it("has one section per config group of the real schema", () => {
    expect(sections.map((s) => s.name)).toEqual(Object.keys((schema as { properties: object }).properties));
  });

  it("renders a closed section's fields once it is opened, and a section with an error open", () => {
    const { container } = render(<Harness errors={{ "rollout.n": ["Must be at least 2 for GRPO."] }} />);
    expect(container.querySelector('[data-path="trainer.total_steps"]')).toBeNull();
    expect(container.querySelector('[data-path="rollout.n"]')).not.toBeNull();
    const trainer = [...container.querySelectorAll("details")].find((d) => d.querySelector("summary")?.textContent?.startsWith("trainer"));
    fireEvent.click(trainer!.querySelector("summary")!); // jsdom toggles on the summary's click
    fireEvent(trainer!, new Event("toggle"));
    expect(container.querySelector('[data-path="trainer.total_steps"]')).toHaveValue("40");
  });

  it("renders every field of the real schema with the control its type needs", () => {
    const { container } = render(<Harness />);
    openAll(container);
    const kinds = new Set<string>();
    for (const field of sections.flatMap((s) => s.fields)) {
      const control = container.querySelector(`[data-path="${field.path}"]`);
      expect(control, field.path).not.toBeNull();
      kinds.add(field.kind.type);
      const tag = control?.tagName.toLowerCase();
      if (field.kind.type === "enum") expect(tag, field.path).toBe("select");
      if (field.kind.type === "boolean") expect(control, field.path).toHaveAttribute("type", "checkbox");
      if (field.kind.type === "list" || field.kind.type === "json") expect(tag, field.path).toBe("textarea");
      if (field.kind.type === "number") expect(tag, field.path).toBe("input");
    }
    // The schema really has each kind: a new kind would need a control here.
    expect([...kinds].sort()).toEqual(["boolean", "enum", "json", "list", "number", "string", "tuple"]);
  });

  it("places every server error: at its field, the field holding it, its section, or above", () => {
    const placed = placeErrors(sections, {
      "actor.optim.lr": ["too big"],
      "reward.extra_models.0.weight": ["Input should be a valid number"],
      reward: ["reward sources need distinct names"],
      "": ["train_batch_size must be a multiple"],
    });
    expect(placed.fields).toEqual({ "actor.optim.lr": ["too big"], "reward.extra_models": ["0.weight: Input should be a valid number"] });
    expect(placed.sections).toEqual({ reward: ["reward sources need distinct names"] });
    expect(placed.general).toEqual(["train_batch_size must be a multiple"]);
  });

  it("shows a section's own error inside it, opened", () => {
    render(<ConfigForm sections={sections} value={preset} base={preset} errors={{ reward: ["names clash"] }} baseName="preset" onChange={() => {}} />);
    expect(screen.getByRole("alert")).toHaveTextContent("names clash");
    expect(screen.getByText("1 to fix")).toBeInTheDocument();
  });

  it("edits a list of sections (reward.extra_models) as JSON", () => {
    const onChange = vi.fn();
    const { container } = render(<Harness onChange={onChange} />);
    openAll(container);
    const models = container.querySelector('[data-path="reward.extra_models"]') as HTMLTextAreaElement;
    expect(models).toHaveValue("[]");
    fireEvent.change(models, { target: { value: '[{"path": "var/judge", "name": "judge"}]' } });
    expect(onChange).toHaveBeenLastCalledWith("reward.extra_models", [{ path: "var/judge", name: "judge" }]);
  });

  it("shows each field's description as its help text and enums as their options", () => {
    const { container } = render(<Harness />);
    openAll(container);
    const loss = container.querySelector('[data-path="actor.loss_agg_mode"]') as HTMLSelectElement;
    expect([...loss.options].map((o) => o.value)).toContain("seq-mean-token-sum-norm");
    expect(loss).toHaveAccessibleDescription("How token losses aggregate.");
  });

  it("starts from the preset's values and marks a changed field", () => {
    const onChange = vi.fn();
    const { container } = render(<Harness onChange={onChange} />);
    openAll(container);
    const steps = container.querySelector('[data-path="trainer.total_steps"]') as HTMLInputElement;
    expect(steps).toHaveValue(String(getAt(preset, "trainer.total_steps")));
    fireEvent.change(steps, { target: { value: "7" } });
    expect(onChange).toHaveBeenLastCalledWith("trainer.total_steps", 7);
    expect(screen.getByRole("button", { name: "Reset trainer.total_steps" })).toBeInTheDocument();
    expect(screen.getByText("1 changed")).toBeInTheDocument();
  });

  it("sends text that is not a number as typed, so the server names the problem", () => {
    const onChange = vi.fn();
    const { container } = render(<Harness onChange={onChange} />);
    openAll(container);
    fireEvent.change(container.querySelector('[data-path="actor.optim.lr"]') as HTMLInputElement, { target: { value: "fast" } });
    expect(onChange).toHaveBeenLastCalledWith("actor.optim.lr", "fast");
  });

  it("puts a server error at the field it names and opens that field's section", () => {
    const { container } = render(<Harness errors={{ "rollout.n": ["Input should be greater than or equal to 1"] }} />);
    const n = container.querySelector('[data-path="rollout.n"]') as HTMLInputElement;
    expect(n).toBeVisible();
    expect(n).toHaveAttribute("aria-invalid", "true");
    expect(n).toHaveAccessibleDescription(expect.stringContaining("Input should be greater than or equal to 1"));
    const section = n.closest("details") as HTMLElement;
    expect(within(section).getByText("1 to fix")).toBeInTheDocument();
    expect(container.querySelectorAll('[aria-invalid="true"]')).toHaveLength(1);
  });
});
