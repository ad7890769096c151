/** Query, mutation and stream hooks of the playground (keys and fetchers live in api.ts). */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useCallback, useState } from "react";

import { useEventStream } from "../../lib/useEventStream";
import {
  exchangeEventsUrl,
  listPlaygroundModels,
  playgroundKeys,
  sendMessage,
  stopExchange,
  warmModel,
  type PlaygroundModel,
  type Sampling,
  type Target,
} from "./api";
import { addExchange, applyEvent, isAnswering, messagesFor, targetOf, type Column, type StreamEvent } from "./lib/chat";

/** How often the model list is asked for again while a server starts or loads. */
export const POLL_MS = 2000;

function isLoading(models: PlaygroundModel[] | undefined): boolean {
  return Boolean(models?.some((m) => m.server === "starting" || m.server === "loading"));
}

/** The project's models and checkpoints, each with its model server's state. */
export function usePlaygroundModels(project: string) {
  return useQuery({
    queryKey: playgroundKeys.models(project),
    queryFn: ({ signal }) => listPlaygroundModels(project, signal),
    enabled: Boolean(project),
    refetchInterval: (query) => (isLoading(query.state.data) ? POLL_MS : false),
  });
}

/** Load a model as soon as it is picked (its server state shows in the list). */
export function useWarmModel(project: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (target: Target) => warmModel(project, target),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: playgroundKeys.models(project) }),
  });
}

export type ChatSettings = { system: string; sampling: Sampling };

/**
 * One chat of the page: a column per picked model, a message sent to every column at
 * once, the replies read from the exchange's stream as they are written, and Stop.
 */
export function usePlaygroundChat(project: string, targets: string[]) {
  const queryClient = useQueryClient();
  const [columns, setColumns] = useState<Column[]>(() => targets.map((target) => ({ target, turns: [] })));
  const [exchange, setExchange] = useState<string | null>(null);
  // The picked models changed: a model still picked keeps its conversation, a new one
  // starts with none (a conversation belongs to its model).
  const key = targets.join("|");
  const [shownKey, setShownKey] = useState(key);
  if (shownKey !== key) {
    setShownKey(key);
    setColumns((current) => targets.map((target) => current.find((c) => c.target === target) ?? { target, turns: [] }));
    setExchange(null);
  }

  const on = (kind: StreamEvent["kind"]) => (data: unknown) => setColumns((current) => applyEvent(current, { ...(data as object), kind } as StreamEvent));
  useEventStream(exchange ? exchangeEventsUrl(exchange) : null, {
    "reply-status": on("reply-status"),
    chunk: on("chunk"),
    done: on("done"),
    error: on("error"),
    end: () => {
      setExchange(null); // the stream ends here: close it before EventSource reconnects
      void queryClient.invalidateQueries({ queryKey: playgroundKeys.models(project) });
    },
  });

  const send = useMutation({
    mutationFn: ({ message, settings }: { message: string; settings: ChatSettings }) =>
      sendMessage({
        project,
        system: settings.system,
        sampling: settings.sampling,
        chats: columns.map((column) => ({ target: targetOf(column.target), messages: messagesFor(column, message) })),
      }),
    onSuccess: (sent, { message }) => {
      setColumns((current) => addExchange(current, message, sent.replies));
      setExchange(sent.id);
      void queryClient.invalidateQueries({ queryKey: playgroundKeys.models(project) });
    },
  });
  const stop = useMutation({ mutationFn: (id: string) => stopExchange(id) });
  const clear = useCallback(() => {
    setColumns(targets.map((target) => ({ target, turns: [] })));
    setExchange(null);
    // eslint-disable-next-line react-hooks/exhaustive-deps -- `key` names the targets
  }, [key]);

  return {
    columns,
    answering: isAnswering(columns) || send.isPending,
    send,
    stop: () => (exchange ? stop.mutate(exchange) : undefined),
    clear,
  };
}
