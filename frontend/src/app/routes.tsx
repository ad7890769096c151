import { Navigate, type RouteObject } from "react-router";

import { DatasetsPage } from "../features/datasets/pages/DatasetsPage";
import { SystemStatusPage } from "../features/health/pages/SystemStatusPage";
import { RewardFunctionsPage } from "../features/rewards/pages/RewardFunctionsPage";
import { rolloutRoutes } from "../features/rollouts/routes";
import { RunsPage } from "../features/runs/pages/RunsPage";
import { AppShell } from "./AppShell";
import { NotFoundPage } from "./NotFoundPage";

/** Client-side routes. Django answers every non-API path with index.html. */
export const routes: RouteObject[] = [
  {
    path: "/",
    element: <AppShell />,
    children: [
      { index: true, element: <Navigate to="/runs" replace /> },
      { path: "runs", element: <RunsPage /> },
      { path: "datasets", element: <DatasetsPage /> },
      { path: "reward-functions", element: <RewardFunctionsPage /> },
      { path: "status", element: <SystemStatusPage /> },
      { path: "p/:slug", children: rolloutRoutes },
      { path: "*", element: <NotFoundPage /> },
    ],
  },
];
