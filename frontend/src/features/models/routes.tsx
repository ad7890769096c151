/** The models pages, relative to a project (`/p/:slug/`); each page is its own chunk. */
import type { RouteObject } from "react-router";

export const modelRoutes: RouteObject[] = [
  {
    path: "models",
    lazy: async () => ({ Component: (await import("./pages/ModelsPage")).ModelsPage }),
  },
  {
    path: "models/:modelId",
    lazy: async () => ({ Component: (await import("./pages/ModelDetailPage")).ModelDetailPage }),
  },
];
