import { useCallback, useState } from "react";

/**
 * A control's value that answers its click at once. For state kept elsewhere (the URL,
 * a parent) that updates later (a router navigation is a transition, slow on a loaded
 * machine): the local copy changes on the click, and a new value from outside replaces it.
 */
export function useLocalCopy<T>(value: T, onChange: (next: T) => void): [T, (next: T) => void] {
  const [local, setLocal] = useState(value);
  const [outside, setOutside] = useState(value);
  if (outside !== value) {
    // Adjusting state while rendering (React's pattern for props that change): no effect,
    // so the stale copy is never painted.
    setOutside(value);
    setLocal(value);
  }
  const change = useCallback(
    (next: T) => {
      setLocal(next);
      onChange(next);
    },
    [onChange],
  );
  return [local, change];
}
