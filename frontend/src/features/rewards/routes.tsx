/** The reward pages, relative to a project (`/p/:slug/`); each page is its own chunk. */
import type { RouteObject } from "react-router";

export const rewardRoutes: RouteObject[] = [
  {
    path: "reward-functions",
    lazy: async () => ({
      Component: (await import("./pages/RewardFunctionsPage")).RewardFunctionsPage,
    }),
  },
  {
    path: "reward-functions/:functionId",
    lazy: async () => ({
      Component: (await import("./pages/RewardEditorPage")).RewardEditorPage,
    }),
  },
];
