import { lazy, Suspense, type ComponentType } from "react";
import { Navigate, type RouteObject } from "react-router";

import { Loading } from "../components/Spinner";
import { RequireAuth } from "../features/auth/components/RequireAuth";
import { SignInPage } from "../features/auth/pages/SignInPage";
import { datasetRoutes } from "../features/datasets/routes";
import { SystemStatusPage } from "../features/health/pages/SystemStatusPage";
import { modelRoutes } from "../features/models/routes";
import { ProjectLayout } from "../features/projects/components/ProjectLayout";
import { HomeRedirect } from "../features/projects/pages/HomeRedirect";
import { MembersPage } from "../features/projects/pages/MembersPage";
import { NewProjectPage } from "../features/projects/pages/NewProjectPage";
import { rewardRoutes } from "../features/rewards/routes";
import { rolloutRoutes } from "../features/rollouts/routes";
import { RunPage } from "../features/runs/pages/RunPage";
import { RunsPage } from "../features/runs/pages/RunsPage";
import { TokensPage } from "../features/tokens/pages/TokensPage";
import { AppShell } from "./AppShell";
import { NotFoundPage } from "./NotFoundPage";

/**
 * What a full page load shows while the matched route's lazy code loads (the data
 * router renders it before the first match resolves; without one it warns).
 */
export function HydrateFallback() {
  return (
    <div style={{ padding: "32px 40px" }} data-testid="app-loading">
      <Loading what="the studio" />
    </div>
  );
}

/**
 * A route-level code split: heavy pages (the config form, comparisons) load when visited.
 * The run page is not split: it is the page most often opened first, and a lazy page is
 * revealed at least 300 ms after its fallback showed (React's Suspense throttle), a third
 * of the 2 s its first screen may take. Its charts' plotly stays a lazy chunk.
 */
function lazyPage<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K, what: string) {
  const Page = lazy<ComponentType>(async () => ({ default: (await load())[name] as ComponentType }));
  return (
    <Suspense fallback={<Loading what={what} />}>
      <Page />
    </Suspense>
  );
}

/**
 * Client-side routes. Django answers every non-API path with index.html. Project pages
 * live under `/p/:slug/`, so a link names its project and can be shared.
 * Rollouts (part 2) replace their placeholder here.
 */
export const routes: RouteObject[] = [
  { path: "/sign-in", element: <SignInPage />, HydrateFallback },
  {
    path: "/",
    HydrateFallback,
    element: (
      <RequireAuth>
        <AppShell />
      </RequireAuth>
    ),
    children: [
      { index: true, element: <HomeRedirect /> },
      { path: "projects/new", element: <NewProjectPage /> },
      { path: "tokens", element: <TokensPage /> },
      { path: "status", element: <SystemStatusPage /> },
      // Paths from before projects were in the URL.
      { path: "runs", element: <Navigate to="/" replace /> },
      {
        path: "p/:slug",
        element: <ProjectLayout />,
        children: [
          { index: true, element: <Navigate to="runs" replace /> },
          { path: "runs", element: <RunsPage /> },
          { path: "runs/new", element: lazyPage(() => import("../features/runs/pages/NewRunPage"), "NewRunPage", "the run form") },
          { path: "runs/:runId", element: <RunPage /> },
          { path: "runs/:runId/samples", element: <RunPage /> }, // the run page's Samples tab
          ...rolloutRoutes,
          { path: "compare", element: lazyPage(() => import("../features/runs/pages/ComparePage"), "ComparePage", "the comparison") },
          ...modelRoutes,
          ...datasetRoutes,
          ...rewardRoutes,
          { path: "members", element: <MembersPage /> },
        ],
      },
      { path: "*", element: <NotFoundPage /> },
    ],
  },
];
