/**
 * The reward editor's state as one reducer: the text in the editor (opened once per version
 * shown, from a draft that differs), the notice above it, the problems beside it, and the
 * save form's message and error. Pure: the page feeds it what loaded and what the user did,
 * and reads the state back; drafts in the browser's storage are read and written by the page.
 */
import { openingText, type Draft } from "./drafts";
import { problemFromMessage, type Problem } from "./markers";

export type EditorState = {
  /** The version the text was opened for, `<function>:<number|none>`; null: open the next one shown. */
  openedFor: string | null;
  /** The editor's text; null until the version shown has loaded. */
  code: string | null;
  notice: string | null;
  problems: Problem[];
  /** The save form's version message. */
  message: string;
  saveError: string | null;
};

export type EditorAction =
  /** A version is shown: opened as saved when the user chose it, else from a differing draft. */
  | { type: "open"; key: string; saved: { code: string; number: number } | null; draft: Draft | null; chosen: boolean }
  /** Another version is chosen: the next one shown opens. */
  | { type: "reopen" }
  | { type: "type"; code: string }
  | { type: "discardDraft"; savedCode: string }
  | { type: "checked"; problems: Problem[] }
  | { type: "message"; message: string }
  | { type: "saveStarted" }
  | { type: "saved"; key: string; number: number }
  | { type: "saveFailed"; message: string };

export const initialEditorState: EditorState = { openedFor: null, code: null, notice: null, problems: [], message: "", saveError: null };

const RESTORED = "Restored your unsaved draft.";
const RESTORED_BEHIND = "Restored your unsaved draft. It started from an older version than the latest one: compare before saving.";

/** Whether the notice offers to discard the draft it restored. */
export function restoredDraft(state: EditorState): boolean {
  return state.notice === RESTORED || state.notice === RESTORED_BEHIND;
}

export function editorReducer(state: EditorState, action: EditorAction): EditorState {
  switch (action.type) {
    case "open": {
      if (state.openedFor === action.key) return state;
      if (action.chosen) return { ...state, openedFor: action.key, code: action.saved?.code ?? "", notice: null };
      const opening = openingText(action.saved, action.draft);
      const notice = opening.fromDraft ? (opening.draftIsBehind ? RESTORED_BEHIND : RESTORED) : null;
      return { ...state, openedFor: action.key, code: opening.code, notice };
    }
    case "reopen":
      return { ...state, openedFor: null };
    case "type":
      return { ...state, code: action.code };
    case "discardDraft":
      return { ...state, code: action.savedCode, notice: null };
    case "checked":
      return { ...state, problems: action.problems };
    case "message":
      return { ...state, message: action.message };
    case "saveStarted":
      return { ...state, saveError: null };
    case "saved":
      // The saved version is what the editor holds: it is not opened again when it shows.
      return { ...state, openedFor: action.key, problems: [], message: "", notice: `Saved as version ${action.number}.` };
    case "saveFailed":
      // A syntax error names its line: shown in the editor as well as below it.
      return { ...state, saveError: action.message, problems: /line \d+/.test(action.message) ? [problemFromMessage(action.message)] : state.problems };
  }
}
