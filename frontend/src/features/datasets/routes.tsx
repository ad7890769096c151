/** The dataset pages, relative to a project (`/p/:slug/`); each page is its own chunk. */
import type { RouteObject } from "react-router";

export const datasetRoutes: RouteObject[] = [
  {
    path: "datasets",
    lazy: async () => ({ Component: (await import("./pages/DatasetsPage")).DatasetsPage }),
  },
  {
    path: "datasets/:datasetId",
    lazy: async () => ({
      Component: (await import("./pages/DatasetDetailPage")).DatasetDetailPage,
    }),
  },
];
