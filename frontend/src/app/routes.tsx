import type { QueryClient } from "@tanstack/react-query";
import type { ComponentType } from "react";
import { Navigate, type RouteObject } from "react-router";

import { Loading } from "../components/Spinner";
import { RequireAuth } from "../features/auth/components/RequireAuth";
import { SignInPage } from "../features/auth/pages/SignInPage";
import { SystemStatusPage } from "../features/health/pages/SystemStatusPage";
import { ProjectLayout } from "../features/projects/components/ProjectLayout";
import { HomeRedirect } from "../features/projects/pages/HomeRedirect";
import { MembersPage } from "../features/projects/pages/MembersPage";
import { NewProjectPage } from "../features/projects/pages/NewProjectPage";
import { ExplorerPage } from "../features/rollouts/pages/ExplorerPage";
import { GroupPage } from "../features/rollouts/pages/GroupPage";
import { PromptsPage } from "../features/rollouts/pages/PromptsPage";
import { TimelinePage } from "../features/rollouts/pages/TimelinePage";
import { TokensPage as SampleTokensPage } from "../features/rollouts/pages/TokensPage";
import { explorerPageLoader } from "../features/rollouts/loaders";
import { sessionLoader } from "../features/auth/loaders";
import { datasetQueries } from "../features/datasets/api";
import { modelQueries } from "../features/models/api";
import { projectLoader } from "../features/projects/loaders";
import { comparePageLoader, runPageLoader, runsPageLoader } from "../features/runs/loaders";
import { RunPage } from "../features/runs/pages/RunPage";
import { RunsPage } from "../features/runs/pages/RunsPage";
import { sweepPageLoader, sweepsPageLoader } from "../features/sweeps/loaders";
import { TokensPage } from "../features/tokens/pages/TokensPage";
import { AppShell } from "./AppShell";
import { projectListsLoader } from "../lib/prefetch";
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
 * A route whose page is its own chunk, loaded by the router before it renders (the
 * previous page stays until then; on a full load, `HydrateFallback` shows). Pages often
 * opened first (the runs list, the run page and its sample views) are not split: their
 * first screen would wait for a second request.
 */
function lazyPage<K extends string>(load: () => Promise<Record<K, ComponentType>>, name: K): Pick<RouteObject, "lazy"> {
  return { lazy: async () => ({ Component: (await load())[name] }) };
}

/**
 * Client-side routes, every one declared here. Django answers every non-API path with
 * index.html. Project pages live under `/p/:slug/`, so a link names its project and can
 * be shared. Loaders prefetch into `queryClient`, the one the app's provider holds.
 */
export function appRoutes(queryClient: QueryClient): RouteObject[] {
  const runPage = { element: <RunPage />, loader: runPageLoader(queryClient) };
  return [
    { path: "/sign-in", element: <SignInPage />, HydrateFallback },
    {
      path: "/",
      HydrateFallback,
      loader: sessionLoader(queryClient),
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
          loader: projectLoader(queryClient),
          children: [
            { index: true, element: <Navigate to="runs" replace /> },
            { path: "runs", element: <RunsPage />, loader: runsPageLoader(queryClient) },
            { path: "runs/new", ...lazyPage(() => import("../features/runs/pages/NewRunPage"), "NewRunPage") },
            { path: "runs/:runId", ...runPage },
            { path: "runs/:runId/samples", ...runPage }, // the run page's Samples tab
            { path: "runs/:runId/rollouts", element: <ExplorerPage />, loader: explorerPageLoader(queryClient) },
            { path: "runs/:runId/rollouts/prompts", element: <PromptsPage /> },
            { path: "runs/:runId/rollouts/group/:step/:groupId", element: <GroupPage /> },
            { path: "runs/:runId/rollouts/samples/:sampleId/tokens", element: <SampleTokensPage /> },
            { path: "runs/:runId/rollouts/samples/:sampleId/timeline", element: <TimelinePage /> },
            { path: "sweeps", loader: sweepsPageLoader(queryClient), ...lazyPage(() => import("../features/sweeps/pages/SweepsPage"), "SweepsPage") },
            { path: "sweeps/new", ...lazyPage(() => import("../features/sweeps/pages/NewSweepPage"), "NewSweepPage") },
            { path: "sweeps/:sweepId", loader: sweepPageLoader(queryClient), ...lazyPage(() => import("../features/sweeps/pages/SweepPage"), "SweepPage") },
            { path: "compare", loader: comparePageLoader(queryClient), ...lazyPage(() => import("../features/runs/pages/ComparePage"), "ComparePage") },
            { path: "evaluations", ...lazyPage(() => import("../features/evaluations/pages/EvaluationsPage"), "EvaluationsPage") },
            { path: "evaluations/:evaluationId", ...lazyPage(() => import("../features/evaluations/pages/EvaluationPage"), "EvaluationPage") },
            { path: "playground", ...lazyPage(() => import("../features/playground/pages/PlaygroundPage"), "PlaygroundPage") },
            { path: "models", loader: projectListsLoader(queryClient, modelQueries.list), ...lazyPage(() => import("../features/models/pages/ModelsPage"), "ModelsPage") },
            { path: "models/:modelId", ...lazyPage(() => import("../features/models/pages/ModelDetailPage"), "ModelDetailPage") },
            { path: "datasets", loader: projectListsLoader(queryClient, datasetQueries.list), ...lazyPage(() => import("../features/datasets/pages/DatasetsPage"), "DatasetsPage") },
            { path: "datasets/:datasetId", ...lazyPage(() => import("../features/datasets/pages/DatasetDetailPage"), "DatasetDetailPage") },
            { path: "reward-functions", ...lazyPage(() => import("../features/rewards/pages/RewardFunctionsPage"), "RewardFunctionsPage") },
            { path: "reward-functions/:functionId", ...lazyPage(() => import("../features/rewards/pages/RewardEditorPage"), "RewardEditorPage") },
            { path: "members", element: <MembersPage /> },
          ],
        },
        { path: "*", element: <NotFoundPage /> },
      ],
    },
  ];
}
