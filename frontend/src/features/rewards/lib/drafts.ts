/**
 * Unsaved editor text kept in localStorage, one draft per reward function, so a
 * reload, a crash or a mis-click never loses work silently. A draft remembers the
 * version it was based on: when someone saved a newer version since, the editor
 * says so instead of quietly overwriting either.
 */
export type Draft = {
  code: string;
  /** The version number the draft started from; null for a function without versions. */
  baseVersion: number | null;
  savedAt: number;
};

const PREFIX = "rlstudio.reward-draft.";

export function draftKey(functionId: number): string {
  return `${PREFIX}${functionId}`;
}

function isDraft(value: unknown): value is Draft {
  if (typeof value !== "object" || value === null) return false;
  const draft = value as Record<string, unknown>;
  return (
    typeof draft.code === "string" &&
    (draft.baseVersion === null || typeof draft.baseVersion === "number") &&
    typeof draft.savedAt === "number"
  );
}

export function loadDraft(functionId: number, storage: Storage = localStorage): Draft | null {
  let raw: string | null;
  try {
    raw = storage.getItem(draftKey(functionId));
  } catch {
    return null; // storage disabled (private mode): no drafts, nothing breaks
  }
  if (raw === null) return null;
  try {
    const parsed: unknown = JSON.parse(raw);
    return isDraft(parsed) ? parsed : null;
  } catch {
    return null;
  }
}

/** Keeps `code` as the draft; returns false when storage refused it (full or disabled). */
export function saveDraft(
  functionId: number,
  code: string,
  baseVersion: number | null,
  storage: Storage = localStorage,
  now: number = Date.now(),
): boolean {
  const draft: Draft = { code, baseVersion, savedAt: now };
  try {
    storage.setItem(draftKey(functionId), JSON.stringify(draft));
    return true;
  } catch {
    return false;
  }
}

export function clearDraft(functionId: number, storage: Storage = localStorage): void {
  try {
    storage.removeItem(draftKey(functionId));
  } catch {
    // nothing kept, nothing to clear
  }
}

export type OpeningText = {
  code: string;
  /** The editor opened the draft, not the saved version. */
  fromDraft: boolean;
  /** The draft started from an older version than the latest saved one. */
  draftIsBehind: boolean;
};

/** What the editor opens with: a draft that differs from the latest version wins. */
/** What the editor holds for a function with no version yet ("an empty function"):
 * verl's signature, scoring 0 until it is written, so it opens without a problem. */
export const EMPTY_FUNCTION = `def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """Score one response: return a number, or a dict with a "score" key."""
    return 0.0
`;

export function openingText(
  saved: { code: string; number: number } | null,
  draft: Draft | null,
): OpeningText {
  const savedCode = saved?.code ?? EMPTY_FUNCTION;
  if (draft === null || draft.code === savedCode) {
    return { code: savedCode, fromDraft: false, draftIsBehind: false };
  }
  const behind = saved !== null && (draft.baseVersion === null || draft.baseVersion < saved.number);
  return { code: draft.code, fromDraft: true, draftIsBehind: behind };
}

export function hasUnsavedChanges(code: string, savedCode: string): boolean {
  return code !== savedCode;
}
