/**
 * The run form's config tree and its YAML view, one state: the config form edits paths,
 * the YAML box shows what differs from the base (the preset or the cloned run) and, once
 * left, puts what was typed back into the tree; a preset change keeps the user's changes on
 * the new base. A reducer rather than effects keeping copies in sync.
 */
import { useMemo, useReducer } from "react";
import YAML from "yaml";

import { changedTree, isTree, type ConfigTree } from "./configDiff";
import { setAt } from "./configSchema";

export type ConfigDraft = {
  base: ConfigTree;
  config: ConfigTree;
  /** The YAML as typed: shown while the box has focus, and after a mistake until fixed. */
  yaml: { text: string; editing: boolean; error: string };
};

export type ConfigDraftAction =
  | { type: "edit"; path: string; value: unknown }
  | { type: "replace"; config: ConfigTree }
  | { type: "rebase"; base: ConfigTree }
  | { type: "yamlFocus" }
  | { type: "yamlType"; text: string }
  | { type: "yamlCommit" };

function mergeTrees(base: ConfigTree, over: ConfigTree): ConfigTree {
  const out: ConfigTree = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const b = out[key];
    out[key] = isTree(value) && isTree(b) ? mergeTrees(b, value) : value;
  }
  return out;
}

/** The YAML of what differs from the base ("" when nothing does). */
export function changesAsYaml(draft: ConfigDraft): string {
  const changed = changedTree(draft.config, draft.base);
  return Object.keys(changed).length ? YAML.stringify(changed) : "";
}

export function startDraft(base: ConfigTree): ConfigDraft {
  return { base, config: base, yaml: { text: "", editing: false, error: "" } };
}

const settled = { text: "", editing: false, error: "" };

export function configDraftReducer(draft: ConfigDraft, action: ConfigDraftAction): ConfigDraft {
  switch (action.type) {
    case "edit":
      return { ...draft, config: setAt(draft.config, action.path, action.value), yaml: settled };
    case "replace":
      return { ...draft, config: action.config, yaml: settled };
    case "rebase":
      return { base: action.base, config: mergeTrees(action.base, changedTree(draft.config, draft.base)), yaml: settled };
    case "yamlFocus":
      return { ...draft, yaml: { text: draft.yaml.error ? draft.yaml.text : changesAsYaml(draft), editing: true, error: draft.yaml.error } };
    case "yamlType":
      return { ...draft, yaml: { ...draft.yaml, text: action.text } };
    case "yamlCommit": {
      try {
        const parsed: unknown = draft.yaml.text.trim() ? YAML.parse(draft.yaml.text) : {};
        if (!isTree(parsed)) throw new Error("The YAML must be a mapping of config groups, e.g. `rollout: {n: 8}`.");
        return { ...draft, config: mergeTrees(draft.base, parsed), yaml: settled };
      } catch (error) {
        return { ...draft, yaml: { text: draft.yaml.text, editing: false, error: error instanceof Error ? error.message : String(error) } };
      }
    }
  }
}

/** The draft, what it changed from its base, the YAML box's text, and the reducer's dispatch. */
export function useConfigDraft(base: ConfigTree) {
  const [draft, dispatch] = useReducer(configDraftReducer, base, startDraft);
  const changed = useMemo(() => changedTree(draft.config, draft.base), [draft.config, draft.base]);
  const yamlText = draft.yaml.editing || draft.yaml.error ? draft.yaml.text : changesAsYaml(draft);
  return { draft, changed, yamlText, dispatch };
}
