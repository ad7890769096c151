import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, expectTypeOf, it, vi } from "vitest";

import { mockApi } from "../../../test/render";
import { model, page } from "../../models/fixtures";
import type { RunDetail } from "../api";
import { EXTENSION, INPUT_KINDS, inputKindsOf, kindInputsRequest, kindShown, type InputKind, type KindField } from "../lib/inputKinds";
import { runFieldOf } from "../lib/runForm";
import { KindPicker } from "./InputKindPickers";

afterEach(() => {
  vi.unstubAllGlobals();
});

/** The whole generated schema (frontend/openapi.json), as `scripts/gen-api.sh` writes it. */
function generatedSchema() {
  return JSON.parse(readFileSync(resolve(dirname(fileURLToPath(import.meta.url)), "../../../../openapi.json"), "utf8")) as Parameters<typeof inputKindsOf>[0];
}

const GAE = { algorithm: { adv_estimator: "gae" } };
const LORA = { actor: { lora: { rank: 8 } } };

function kind(field: string): InputKind {
  const found = INPUT_KINDS.find((k) => k.field === field);
  if (!found) throw new Error(`no picker for ${field}`);
  return found;
}

function wrapped(node: React.ReactNode) {
  return render(<QueryClientProvider client={new QueryClient({ defaultOptions: { queries: { retry: false } } })}>{node}</QueryClientProvider>);
}

function optionsOf(label: string) {
  return [...screen.getByLabelText(label).querySelectorAll("option")].map((o) => o.textContent);
}

describe("the generic pickers of run inputs", () => {
  it("are the run request fields whose generated schema carries a picker", () => {
    expect(inputKindsOf(generatedSchema())).toEqual(INPUT_KINDS); // the shipped cut is the schema's
    expect(INPUT_KINDS.map((k) => k.field)).toEqual(["critic_model", "lora_adapter"]);
    expectTypeOf<KindField>().toEqualTypeOf<"critic_model" | "lora_adapter">();
    expect(runFieldOf("lora_adapter")).toBe("kinds.lora_adapter"); // the server's errors for it, at its picker
  });

  it("offer a critic model for the estimators that train a critic, and an adapter when LoRA is on", () => {
    const critic = kind("critic_model");
    expect(kindShown(critic, GAE)).toBe(true);
    expect(kindShown(critic, { algorithm: { adv_estimator: "grpo" } })).toBe(false);
    expect(kindShown(critic, {})).toBe(false); // the config's default, grpo
    const adapter = kind("lora_adapter");
    expect(kindShown(adapter, LORA)).toBe(true);
    expect(kindShown(adapter, { actor: { lora: { rank: 0 } } })).toBe(false);
    expect(kindShown(adapter, {})).toBe(false);
  });

  it("send only the shown pickers' choices", () => {
    const chosen = { critic_model: 3, lora_adapter: 4 };
    expect(kindInputsRequest(INPUT_KINDS, { ...GAE, ...LORA }, chosen)).toEqual({ critic_model: 3, lora_adapter: 4 });
    expect(kindInputsRequest(INPUT_KINDS, LORA, chosen)).toEqual({ lora_adapter: 4 });
    expect(kindInputsRequest(INPUT_KINDS, GAE, { critic_model: null, lora_adapter: 4 })).toEqual({});
  });

  it("list the project's ready policies as critic models and its adapters as adapters", async () => {
    mockApi({
      "GET /api/models/": page([
        model({ id: 2, name: "qwen", kind: "server" }),
        model({ id: 3, name: "judge", role: "reward", kind: "server" }),
        model({ id: 4, name: "run-7-step-20", role: "adapter", kind: "checkpoint" }),
        model({ id: 5, name: "coming", kind: "server", status: "downloading" }),
      ]),
    });
    const onCritic = vi.fn();
    wrapped(
      <>
        <KindPicker slug="demo" kind={kind("critic_model")} config={GAE} parent={null} value={null} onChange={onCritic} errors={[]} />
        <KindPicker slug="demo" kind={kind("lora_adapter")} config={LORA} parent={null} value={null} onChange={vi.fn()} errors={[]} />
      </>,
    );
    await screen.findByRole("option", { name: "qwen (server)" });
    expect(optionsOf("Critic model")).toEqual(["(the run's model)", "qwen (server)"]);
    expect(optionsOf("LoRA adapter")).toEqual(["(fresh adapters)", "run-7-step-20 (checkpoint)"]);
    fireEvent.change(screen.getByLabelText("Critic model"), { target: { value: "2" } });
    expect(onCritic).toHaveBeenLastCalledWith(2);
  });

  it("start a clone from its parent's choice", async () => {
    mockApi({ "GET /api/models/": page([model({ id: 2, name: "qwen", kind: "server" })]) });
    const parent = { inputs: { critic_model: { id: 2, name: "qwen", kind: "server" }, lora_adapter: null } } as unknown as RunDetail;
    wrapped(<KindPicker slug="demo" kind={kind("critic_model")} config={GAE} parent={parent} value={null} onChange={vi.fn()} errors={[]} />);
    await screen.findByRole("option", { name: "qwen (server)" });
    expect(optionsOf("Critic model")[0]).toBe("(the parent's: qwen)");
  });

  it("show nothing where the config needs neither, and say when a project has no adapter", async () => {
    mockApi({ "GET /api/models/": page([]) });
    const { unmount } = wrapped(
      <>
        <KindPicker slug="demo" kind={kind("critic_model")} config={{}} parent={null} value={null} onChange={vi.fn()} errors={[]} />
        <KindPicker slug="demo" kind={kind("lora_adapter")} config={{}} parent={null} value={null} onChange={vi.fn()} errors={[]} />
      </>,
    );
    expect(screen.queryByLabelText("Critic model")).toBeNull();
    expect(screen.queryByLabelText("LoRA adapter")).toBeNull();
    unmount();
    wrapped(<KindPicker slug="demo" kind={kind("lora_adapter")} config={LORA} parent={null} value={null} onChange={vi.fn()} errors={[]} />);
    expect(await screen.findByText(/No adapters in this project/)).toBeInTheDocument();
  });

  it("render a throwaway kind's picker from the generated schema with no code of its own", async () => {
    const schema = generatedSchema();
    const create = schema.components.schemas.RunCreateRequest;
    if (!create?.properties) throw new Error("the generated schema has no RunCreateRequest");
    create.properties.glossary = {
      type: "integer",
      nullable: true,
      description: "A dataset version to use as a glossary.",
      [EXTENSION]: {
        label: "Glossary",
        help: "A dataset version whose rows are the glossary.",
        list: "/api/datasets/",
        where: {},
        option: "{name}",
        unset: "(no glossary)",
        none: "",
        shown: { path: "logging.console", default: true, in: [true] },
      },
    };
    const kinds = inputKindsOf(schema);
    const glossary = kinds.find((k) => k.field === "glossary");
    if (!glossary) throw new Error("the throwaway kind has no picker");
    const fetchMock = mockApi({ "GET /api/datasets/": page([{ id: 11, name: "terms" }, { id: 12, name: "acronyms" }]) });
    const onChange = vi.fn();
    wrapped(<KindPicker slug="demo" kind={glossary} config={{}} parent={null} value={null} onChange={onChange} errors={["Not of this project."]} />);
    await screen.findByRole("option", { name: "terms" });
    expect(optionsOf("Glossary")).toEqual(["(no glossary)", "terms", "acronyms"]);
    expect(screen.getByText("Not of this project.")).toBeInTheDocument();
    expect(new URL((fetchMock.mock.calls[0]?.[0] as Request).url).searchParams.get("project")).toBe("demo");
    fireEvent.change(screen.getByLabelText("Glossary"), { target: { value: "12" } });
    expect(onChange).toHaveBeenLastCalledWith(12);
    // The request sends it, and the server's errors for it land on its picker.
    expect(kindInputsRequest(kinds, {}, { glossary: 12 })).toEqual({ glossary: 12 });
    expect(kindInputsRequest(kinds, { logging: { console: false } }, { glossary: 12 })).toEqual({});
    expect(runFieldOf("glossary", kinds)).toBe("kinds.glossary");
  });
});
