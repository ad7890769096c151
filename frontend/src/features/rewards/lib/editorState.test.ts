import { describe, expect, it } from "vitest";

import { EMPTY_FUNCTION } from "./drafts";
import { editorReducer as reduce, initialEditorState, restoredDraft, type EditorAction } from "./editorState";
import { problemFromMessage } from "./markers";

const v2 = { code: "def compute_score(*a):\n    return 1.0\n", number: 2 };
const open = (overrides: Partial<Extract<EditorAction, { type: "open" }>> = {}): EditorAction => ({ type: "open", key: "5:2", saved: v2, draft: null, chosen: false, ...overrides });

describe("the reward editor's state", () => {
  it("opens the version shown once, and not again while the user types", () => {
    let state = reduce(initialEditorState, open());
    expect(state.code).toBe(v2.code);
    state = reduce(state, { type: "type", code: "edited" });
    expect(reduce(state, open())).toBe(state);
  });

  it("restores a draft that differs, saying when it started from an older version", () => {
    const state = reduce(initialEditorState, open({ draft: { code: "mine", baseVersion: 1, savedAt: 0 } }));
    expect(state.code).toBe("mine");
    expect(state.notice).toMatch(/older version than the latest/);
    expect(restoredDraft(state)).toBe(true);
    const discarded = reduce(state, { type: "discardDraft", savedCode: v2.code });
    expect(discarded.code).toBe(v2.code);
    expect(discarded.notice).toBeNull();
  });

  it("opens a chosen version as saved, whatever the draft", () => {
    const state = reduce(initialEditorState, open({ key: "5:1", saved: { code: "v1", number: 1 }, draft: { code: "mine", baseVersion: 1, savedAt: 0 }, chosen: true }));
    expect(state.code).toBe("v1");
    expect(state.notice).toBeNull();
  });

  it("opens a function with no version on the empty function", () => {
    expect(reduce(initialEditorState, open({ key: "5:none", saved: null })).code).toBe(EMPTY_FUNCTION);
  });

  it("clears the message and problems on save, and keeps the saved text open", () => {
    let state = reduce(reduce(initialEditorState, open()), { type: "message", message: "faster" });
    state = reduce(state, { type: "checked", problems: [problemFromMessage("line 1: x")] });
    state = reduce(state, { type: "saved", key: "5:3", number: 3 });
    expect(state).toMatchObject({ message: "", problems: [], notice: "Saved as version 3.", openedFor: "5:3" });
    expect(reduce(state, open({ key: "5:3", saved: { code: "other", number: 3 } }))).toBe(state);
  });

  it("shows a refused save below the form, and at its line when it names one", () => {
    const state = reduce(initialEditorState, { type: "saveFailed", message: "invalid syntax (line 3)" });
    expect(state.saveError).toBe("invalid syntax (line 3)");
    expect(state.problems[0]?.line).toBe(3);
    expect(reduce(state, { type: "saveStarted" }).saveError).toBeNull();
  });
});
