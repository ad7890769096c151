import { QueryClient, QueryClientProvider } from "@tanstack/react-query";
import { render, renderHook } from "@testing-library/react";
import type { ReactNode } from "react";
import { createMemoryRouter, RouterProvider } from "react-router";
import { vi } from "vitest";

import { appRoutes } from "../app/routes";
import { ToastProvider } from "../components/Toast";
import { authKeys, type User } from "../features/auth/api";
import { invitationKeys, projectKeys, type Invitation, type Project } from "../features/projects/api";

export const testUser: User = { id: 1, username: "ada", is_staff: false };
export const demoProject: Project = {
  id: 1,
  name: "Demo",
  slug: "demo",
  description: "",
  created_at: "2026-01-01T00:00:00Z",
  role: "owner",
};

type RenderOptions = {
  /** The signed-in user (null: nobody), put in the cache so no request is made for it. */
  user?: User | null;
  projects?: Project[];
  /** Invitations to the user (the shell shows them on every page). */
  invitations?: Invitation[];
};

/** Renders the whole app (shell + routes) at `path` with a fresh query cache. */
export function renderApp(path: string, { user = testUser, projects = [demoProject], invitations = [] }: RenderOptions = {}) {
  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, staleTime: Infinity } },
  });
  queryClient.setQueryData(authKeys.me, user);
  if (user) queryClient.setQueryData(projectKeys.all, projects);
  if (user) queryClient.setQueryData(invitationKeys.mine, invitations);
  const router = createMemoryRouter(appRoutes(queryClient), { initialEntries: [path] });
  const view = render(
    <QueryClientProvider client={queryClient}>
      <ToastProvider>
        <RouterProvider router={router} />
      </ToastProvider>
    </QueryClientProvider>,
  );
  return { ...view, router, queryClient };
}

/**
 * Renders a hook with a fresh query cache (no retries; nothing refetched by itself) and
 * the toasts; answers the hook's result with the cache, to seed it or look into it.
 */
export function renderQueryHook<Result, Props>(hook: (props: Props) => Result, initialProps?: Props) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, staleTime: Infinity } } });
  const wrapper = ({ children }: { children: ReactNode }) => (
    <QueryClientProvider client={queryClient}>
      <ToastProvider>{children}</ToastProvider>
    </QueryClientProvider>
  );
  return { ...renderHook(hook, { wrapper, initialProps }), queryClient };
}

/** One page of a paginated list, as the API answers it. */
export function pageOf<T>(results: T[]) {
  return { count: results.length, next: null, previous: null, results };
}

/** The request a mocked fetch received in call `index`. */
export function requestAt(fetchMock: { mock: { calls: unknown[][] } }, index = 0): Request {
  return fetchMock.mock.calls[index]?.[0] as Request;
}

export function jsonResponse(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

type Answer = Response | Error | (() => Response | Promise<Response>);

/**
 * Replaces global fetch with a mock answering from `answers` in order; the
 * last answer repeats. An Error answer rejects, like a network failure.
 */
export function mockFetch(...answers: Answer[]) {
  let call = 0;
  const fetchMock = vi.fn(async (_input: RequestInfo | URL, _init?: RequestInit) => {
    const answer = answers[Math.min(call, answers.length - 1)];
    call += 1;
    if (answer instanceof Error) throw answer;
    if (typeof answer === "function") return answer();
    if (!answer) throw new Error("mockFetch needs at least one answer");
    return answer.clone();
  });
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}

/**
 * Replaces global fetch with one that answers by path ("GET /api/runs/"): the test
 * says what each endpoint returns, in any order of calls. Unknown paths answer 404.
 */
export function mockApi(answers: Record<string, unknown | ((request: Request) => Response)>) {
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const request = input instanceof Request ? input : new Request(new URL(String(input), "http://localhost"), init);
    const url = new URL(request.url);
    const answer = answers[`${request.method} ${url.pathname}`];
    if (answer === undefined) return jsonResponse({ error: { code: "not_found", message: `No mock for ${request.method} ${url.pathname}` } }, 404);
    if (typeof answer === "function") return (answer as (r: Request) => Response)(request);
    return jsonResponse(answer);
  });
  vi.stubGlobal("fetch", fetchMock);
  return fetchMock;
}
