import { useEffect, useState } from "react";

/**
 * The current time (ms), renewed every `intervalMs` while `ticking`: for durations that
 * count up on screen ("ran 42 s") without anything else re-rendering their component.
 */
export function useNow(ticking: boolean, intervalMs = 1000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    if (!ticking) return undefined;
    setNow(Date.now());
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [ticking, intervalMs]);
  return now;
}
