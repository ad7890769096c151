/**
 * Keeps the editor's unsaved code safe while it differs from the saved version: saved
 * as a draft while typing (debounced) and dropped once it equals the saved code; on
 * leaving, the browser's prompt for reloads and closing the tab, and a blocker for
 * links inside the app (the draft is kept either way). Answers that blocker.
 */
import { useEffect } from "react";
import { useBlocker } from "react-router";

import { clearDraft, saveDraft } from "./drafts";

const DRAFT_EVERY_MS = 500;

export function useDraftKeeper(functionId: number, code: string | null, dirty: boolean, savedNumber: number | null) {
  useEffect(() => {
    if (code === null) return undefined;
    const timer = window.setTimeout(() => {
      if (dirty) saveDraft(functionId, code, savedNumber);
      else clearDraft(functionId);
    }, DRAFT_EVERY_MS);
    return () => window.clearTimeout(timer);
  }, [code, dirty, functionId, savedNumber]);

  useEffect(() => {
    if (!dirty) return undefined;
    const warn = (event: BeforeUnloadEvent) => {
      if (code !== null) saveDraft(functionId, code, savedNumber);
      event.preventDefault();
    };
    window.addEventListener("beforeunload", warn);
    return () => window.removeEventListener("beforeunload", warn);
  }, [dirty, code, functionId, savedNumber]);

  return useBlocker(({ currentLocation, nextLocation }) => dirty && currentLocation.pathname !== nextLocation.pathname);
}
