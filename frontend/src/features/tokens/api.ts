import { api, unwrap, type Schemas } from "../../api/client";

export type ApiToken = Schemas["ApiToken"];
export type ApiTokenCreated = Schemas["ApiTokenCreated"];
export type TokenScope = Schemas["TokenScopeEnum"];

export const tokenKeys = { all: ["tokens"] as const };

export async function fetchTokens(signal?: AbortSignal): Promise<ApiToken[]> {
  const page = await unwrap(api.GET("/api/tokens/", { params: { query: { page_size: 200 } }, signal }));
  return page.results;
}

export type NewToken = { name: string; scopes: TokenScope[]; expiresAt: string | null };

export function createToken({ name, scopes, expiresAt }: NewToken): Promise<ApiTokenCreated> {
  return unwrap(api.POST("/api/tokens/", { body: { name, scopes, expires_at: expiresAt } }));
}

export async function revokeToken(id: number): Promise<void> {
  await unwrap(api.DELETE("/api/tokens/{id}/", { params: { path: { id } } }));
}
