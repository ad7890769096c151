import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi } from "../../../test/render";
import { model, page } from "../../models/fixtures";
import schema from "../fixtures/config-schema.json";
import { CriticModelPicker, criticModelShown, kindInputsRequest, LoraAdapterPicker, loraAdapterShown } from "./InputKindPickers";

afterEach(() => {
  vi.unstubAllGlobals();
});

const GAE = { algorithm: { adv_estimator: "gae" } };
const LORA = { actor: { lora: { rank: 8 } } };

function wrapped(node: React.ReactNode) {
  return render(<QueryClientProvider client={new QueryClient()}>{node}</QueryClientProvider>);
}

describe("the pickers of inputs some configs need", () => {
  it("offer a critic model for the estimators the schema marks as training a critic", () => {
    expect(criticModelShown(schema, GAE)).toBe(true);
    expect(criticModelShown(schema, { algorithm: { adv_estimator: "grpo" } })).toBe(false);
    expect(criticModelShown(schema, {})).toBe(false); // the schema's default, grpo
  });

  it("offer an adapter when LoRA is on", () => {
    expect(loraAdapterShown(LORA)).toBe(true);
    expect(loraAdapterShown({ actor: { lora: { rank: 0 } } })).toBe(false);
    expect(loraAdapterShown({})).toBe(false);
  });

  it("send only the shown pickers' choices", () => {
    const chosen = { criticModel: 3, loraAdapter: 4 };
    expect(kindInputsRequest(schema, { ...GAE, ...LORA }, chosen)).toEqual({ critic_model: 3, lora_adapter: 4 });
    expect(kindInputsRequest(schema, LORA, chosen)).toEqual({ lora_adapter: 4 });
    expect(kindInputsRequest(schema, GAE, { criticModel: null, loraAdapter: 4 })).toEqual({});
  });

  it("list the project's policies as critic models and its adapters as adapters", async () => {
    mockApi({
      "GET /api/models/": page([
        model({ id: 2, name: "qwen", kind: "server" }),
        model({ id: 3, name: "judge", role: "reward", kind: "server" }),
        model({ id: 4, name: "run-7-step-20", role: "adapter", kind: "checkpoint" }),
      ]),
    });
    const onCritic = vi.fn();
    wrapped(
      <>
        <CriticModelPicker slug="demo" schema={schema} config={GAE} parent={null} value={null} onChange={onCritic} errors={[]} />
        <LoraAdapterPicker slug="demo" config={LORA} parent={null} value={null} onChange={vi.fn()} errors={[]} />
      </>,
    );
    await screen.findByRole("option", { name: "qwen (server)" });
    const critic = screen.getByLabelText("Critic model");
    expect([...critic.querySelectorAll("option")].map((o) => o.textContent)).toEqual(["(the run's model)", "qwen (server)"]);
    const adapter = screen.getByLabelText("LoRA adapter");
    expect([...adapter.querySelectorAll("option")].map((o) => o.textContent)).toEqual(["(fresh adapters)", "run-7-step-20 (checkpoint)"]);
    fireEvent.change(critic, { target: { value: "2" } });
    expect(onCritic).toHaveBeenLastCalledWith(2);
  });

  it("show nothing where the config needs neither", () => {
    mockApi({ "GET /api/models/": page([]) });
    wrapped(
      <>
        <CriticModelPicker slug="demo" schema={schema} config={{}} parent={null} value={null} onChange={vi.fn()} errors={[]} />
        <LoraAdapterPicker slug="demo" config={{}} parent={null} value={null} onChange={vi.fn()} errors={[]} />
      </>,
    );
    expect(screen.queryByLabelText("Critic model")).toBeNull();
    expect(screen.queryByLabelText("LoRA adapter")).toBeNull();
  });
});
