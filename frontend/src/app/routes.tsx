import { Navigate, type RouteObject } from "react-router";

import { datasetRoutes } from "../features/datasets/routes";
import { SystemStatusPage } from "../features/health/pages/SystemStatusPage";
import { rewardRoutes } from "../features/rewards/routes";
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
      { path: "p/:slug", children: [...rewardRoutes, ...datasetRoutes] },
      { path: "status", element: <SystemStatusPage /> },
      { path: "*", element: <NotFoundPage /> },
    ],
  },
];
