import { useEffect, useRef } from "react";

export type StreamHandlers = Record<string, (data: unknown, id: string) => void>;

/**
 * Listens to a Server-Sent-Events stream while mounted. EventSource reconnects by
 * itself and sends the last event id it saw (`Last-Event-ID`), so the studio replays
 * what was missed: nothing is lost and nothing is doubled. Handlers may change between
 * renders without reopening the stream.
 */
export function useEventStream(url: string | null, handlers: StreamHandlers, onOpen?: () => void): void {
  const current = useRef(handlers);
  current.current = handlers;
  const opened = useRef(onOpen);
  opened.current = onOpen;
  const names = Object.keys(handlers).sort().join(",");

  useEffect(() => {
    if (!url || typeof EventSource === "undefined") return undefined;
    const source = new EventSource(url, { withCredentials: true });
    const listeners = names.split(",").filter(Boolean).map((name) => {
      const listener = (event: MessageEvent<string>) => {
        let data: unknown;
        try {
          data = JSON.parse(event.data);
        } catch {
          return; // not ours (a proxy's comment line); the stream goes on
        }
        current.current[name]?.(data, event.lastEventId);
      };
      source.addEventListener(name, listener as EventListener);
      return [name, listener] as const;
    });
    source.onopen = () => opened.current?.();
    return () => {
      for (const [name, listener] of listeners) source.removeEventListener(name, listener as EventListener);
      source.close();
    };
  }, [url, names]);
}
