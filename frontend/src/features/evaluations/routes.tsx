/** The evaluations pages, relative to a project (`/p/:slug/`); each page is its own chunk. */
import type { RouteObject } from "react-router";

export const evaluationRoutes: RouteObject[] = [
  {
    path: "evaluations",
    lazy: async () => ({ Component: (await import("./pages/EvaluationsPage")).EvaluationsPage }),
  },
  {
    path: "evaluations/:evaluationId",
    lazy: async () => ({ Component: (await import("./pages/EvaluationPage")).EvaluationPage }),
  },
];
