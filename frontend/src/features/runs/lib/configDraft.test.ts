import { describe, expect, it } from "vitest";

import { changesAsYaml, configDraftReducer as reduce, startDraft } from "./configDraft";

const preset = { rollout: { n: 4, temperature: 1 }, actor: { optim: { lr: 1e-6 } } };

describe("the run form's config draft", () => {
  it("shows only what the form changed as YAML", () => {
    const draft = reduce(startDraft(preset), { type: "edit", path: "rollout.n", value: 8 });
    expect(draft.config.rollout).toEqual({ n: 8, temperature: 1 });
    expect(changesAsYaml(draft)).toBe("rollout:\n  n: 8\n");
  });

  it("puts typed YAML back into the tree on the base when the box is left", () => {
    let draft = reduce(startDraft(preset), { type: "yamlFocus" });
    draft = reduce(draft, { type: "yamlType", text: "actor:\n  optim:\n    lr: 0.001\n" });
    draft = reduce(draft, { type: "yamlCommit" });
    expect(draft.config).toEqual({ rollout: { n: 4, temperature: 1 }, actor: { optim: { lr: 0.001 } } });
    expect(draft.yaml.editing).toBe(false);
  });

  it("keeps YAML that is not a mapping as typed, with the error, and the config as it was", () => {
    let draft = reduce(startDraft(preset), { type: "yamlFocus" });
    draft = reduce(draft, { type: "yamlType", text: "- 1\n- 2" });
    draft = reduce(draft, { type: "yamlCommit" });
    expect(draft.config).toBe(preset);
    expect(draft.yaml.error).toMatch(/mapping of config groups/);
    expect(draft.yaml.text).toBe("- 1\n- 2");
  });

  it("keeps the user's changes on a different preset", () => {
    const edited = reduce(startDraft(preset), { type: "edit", path: "rollout.n", value: 8 });
    const other = { rollout: { n: 2, temperature: 0.7 }, actor: { optim: { lr: 1e-5 } } };
    const draft = reduce(edited, { type: "rebase", base: other });
    expect(draft.config).toEqual({ rollout: { n: 8, temperature: 0.7 }, actor: { optim: { lr: 1e-5 } } });
    expect(changesAsYaml(draft)).toBe("rollout:\n  n: 8\n");
  });
});
