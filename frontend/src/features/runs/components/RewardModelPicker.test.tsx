import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, it, vi } from "vitest";

import { mockApi } from "../../../test/render";
import { model, page } from "../../models/fixtures";
import { RewardModelPicker, rewardModelsRequest, type RewardModelChoice } from "./Pickers";

afterEach(() => {
  vi.unstubAllGlobals();
});

function Harness({ seen }: { seen: (choice: RewardModelChoice) => void }) {
  const [value, setValue] = useState<RewardModelChoice>("default");
  return (
    <RewardModelPicker
      slug="demo"
      value={value}
      onChange={(choice) => {
        setValue(choice);
        seen(choice);
      }}
      errors={[]}
      defaultLabel="(the preset's reward model, if any)"
    />
  );
}

describe("RewardModelPicker", () => {
  it("offers the project's reward models only, beside the default and none", async () => {
    mockApi({ "GET /api/models/": page([model(), model({ id: 2, name: "judge-rm", role: "reward", kind: "server" })]) });
    const seen = vi.fn();
    render(
      <QueryClientProvider client={new QueryClient()}>
        <Harness seen={seen} />
      </QueryClientProvider>,
    );
    const select = screen.getByLabelText("Reward model");
    await screen.findByRole("option", { name: "judge-rm (server)" });
    expect(screen.getAllByRole("option").map((o) => o.textContent)).toEqual([
      "(the preset's reward model, if any)",
      "No reward model",
      "judge-rm (server)",
    ]);
    fireEvent.change(select, { target: { value: "2" } });
    expect(seen).toHaveBeenLastCalledWith(2);
    fireEvent.change(select, { target: { value: "none" } });
    expect(seen).toHaveBeenLastCalledWith("none");
  });

  it("sends nothing for the default, no places for none, the main place for a model", () => {
    expect(rewardModelsRequest("default")).toBeUndefined();
    expect(rewardModelsRequest("none")).toEqual({});
    expect(rewardModelsRequest(7)).toEqual({ "reward.model.path": 7 });
  });
});
