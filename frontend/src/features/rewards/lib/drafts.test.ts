import { describe, expect, it } from "vitest";

import { clearDraft, draftKey, loadDraft, openingText, saveDraft } from "./drafts";

function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (i) => [...items.keys()][i] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, value),
  };
}

describe("drafts", () => {
  it("keeps a draft per function until it is cleared", () => {
    const storage = memoryStorage();
    expect(saveDraft(7, "def f(): pass", 2, storage, 1000)).toBe(true);
    expect(loadDraft(7, storage)).toEqual({ code: "def f(): pass", baseVersion: 2, savedAt: 1000 });
    expect(loadDraft(8, storage)).toBeNull();
    clearDraft(7, storage);
    expect(loadDraft(7, storage)).toBeNull();
  });

  it("ignores a corrupted or foreign value instead of crashing", () => {
    const storage = memoryStorage();
    storage.setItem(draftKey(7), "{not json");
    expect(loadDraft(7, storage)).toBeNull();
    storage.setItem(draftKey(7), JSON.stringify({ code: 5 }));
    expect(loadDraft(7, storage)).toBeNull();
  });

  it("reports a full or disabled storage as not kept", () => {
    const storage = memoryStorage();
    storage.setItem = () => {
      throw new DOMException("quota", "QuotaExceededError");
    };
    expect(saveDraft(7, "x", null, storage)).toBe(false);
  });

  it("opens a draft that differs from the saved version and says when it is behind", () => {
    const saved = { code: "v3", number: 3 };
    expect(openingText(saved, null)).toEqual({ code: "v3", fromDraft: false, draftIsBehind: false });
    const same = { code: "v3", baseVersion: 3, savedAt: 1 };
    expect(openingText(saved, same).fromDraft).toBe(false);
    const current = { code: "edited", baseVersion: 3, savedAt: 1 };
    expect(openingText(saved, current)).toEqual({
      code: "edited",
      fromDraft: true,
      draftIsBehind: false,
    });
    const old = { code: "edited", baseVersion: 2, savedAt: 1 };
    expect(openingText(saved, old).draftIsBehind).toBe(true);
  });
});
