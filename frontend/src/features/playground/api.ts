/** Every request of the chat playground, with its query keys (docs/evaluate.md, "Playground"). */
import { api, unwrap, type Schemas } from "../../api/client";

export type PlaygroundModel = Schemas["PlaygroundModel"];
export type ExchangeCreate = Schemas["ExchangeCreateRequest"];
export type Exchange = Schemas["Exchange"];
export type Sampling = Schemas["SamplingRequest"];
export type Target = Schemas["TargetRequest"];

/** Everything sits under ["playground"]. */
export const playgroundKeys = {
  all: ["playground"] as const,
  models: (project: string) => ["playground", "models", project] as const,
};

export function listPlaygroundModels(project: string, signal?: AbortSignal): Promise<PlaygroundModel[]> {
  return unwrap(api.GET("/api/playground/models/", { params: { query: { project } }, signal }));
}

/** Start loading a model now, so the first message does not wait for it. */
export function warmModel(project: string, target: Target): Promise<PlaygroundModel> {
  return unwrap(api.POST("/api/playground/warm/", { body: { project, target } }));
}

export function sendMessage(body: ExchangeCreate): Promise<Exchange> {
  return unwrap(api.POST("/api/playground/exchanges/", { body }));
}

export async function stopExchange(exchangeId: string): Promise<void> {
  await unwrap(api.POST("/api/playground/exchanges/{exchange_id}/stop/", { params: { path: { exchange_id: exchangeId } } }));
}

/** The exchange's events (SSE), from its first: replies are short-lived, so a page that
 * opens the stream late still reads them whole. */
export function exchangeEventsUrl(exchangeId: string): string {
  return `/api/playground/exchanges/${exchangeId}/events?last_event_id=0`;
}
