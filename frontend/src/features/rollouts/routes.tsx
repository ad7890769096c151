/**
 * The rollout review pages, as route objects relative to a project
 * (`/p/:slug/`): spread `rolloutRoutes` into the project's children.
 */
import type { RouteObject } from "react-router";

import { ExplorerPage } from "./pages/ExplorerPage";
import { GroupPage } from "./pages/GroupPage";
import { PromptsPage } from "./pages/PromptsPage";
import { TimelinePage } from "./pages/TimelinePage";
import { TokensPage } from "./pages/TokensPage";

export const rolloutRoutes: RouteObject[] = [
  { path: "runs/:runId/rollouts", element: <ExplorerPage /> },
  { path: "runs/:runId/rollouts/prompts", element: <PromptsPage /> },
  { path: "runs/:runId/rollouts/group/:step/:groupId", element: <GroupPage /> },
  { path: "runs/:runId/rollouts/samples/:sampleId/tokens", element: <TokensPage /> },
  { path: "runs/:runId/rollouts/samples/:sampleId/timeline", element: <TimelinePage /> },
];
