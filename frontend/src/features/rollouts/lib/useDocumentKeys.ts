import { useEffect, useLayoutEffect, useRef } from "react";

const TYPING = new Set(["INPUT", "TEXTAREA", "SELECT"]);
const PRESSABLE = new Set(["BUTTON", "A", "SUMMARY"]);

/**
 * Whether a key press belongs to the element that has it rather than to the page's
 * shortcuts: typing in a field, a key with a modifier (the browser's own shortcuts), or
 * Enter/Space on a button or link (which presses it).
 */
export function belongsToFocus(event: KeyboardEvent): boolean {
  if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return true;
  const target = event.target instanceof HTMLElement ? event.target : null;
  if (!target) return false;
  if (TYPING.has(target.tagName) || target.isContentEditable) return true;
  return (event.key === "Enter" || event.key === " ") && PRESSABLE.has(target.tagName);
}

/**
 * The page's keyboard shortcuts, from the moment it loads: one listener on the document
 * (no element needs focus first), which leaves alone the keys `belongsToFocus` names.
 */
export function useDocumentKeys(handler: (event: KeyboardEvent) => void): void {
  const latest = useRef(handler);
  // Before paint: a key pressed right after a render acts on what that render shows.
  useLayoutEffect(() => {
    latest.current = handler;
  });
  useEffect(() => {
    const listener = (event: KeyboardEvent) => {
      if (!belongsToFocus(event)) latest.current(event);
    };
    document.addEventListener("keydown", listener);
    return () => document.removeEventListener("keydown", listener);
  }, []);
}
