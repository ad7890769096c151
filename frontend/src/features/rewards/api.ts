/** Every request about reward functions (versions, checks, test-runs, A/B), with their query keys. */
import { api, unwrap, type Schemas } from "../../api/client";

/** verl's entry point; the editor always uses it. */
export const ENTRYPOINT = "compute_score";

export type RewardFunction = Schemas["RewardFunction"];
export type RewardVersion = Schemas["RewardVersion"];
export type RewardVersionSummary = Schemas["RewardVersionSummary"];
export type RewardTemplate = Schemas["RewardTemplate"];
export type RewardCheck = Schemas["RewardCheck"];
export type TestRun = Schemas["RewardTestRun"];
export type TestRunSummary = Schemas["RewardTestRunSummary"];
export type TestRunRequest = Schemas["RewardTestRunCreateRequest"];
export type Comparison = Schemas["Comparison"];

export const rewardKeys = {
  all: ["rewards"] as const,
  list: (project: string) => ["rewards", "list", project] as const,
  detail: (id: number) => ["rewards", "detail", id] as const,
  versions: (id: number) => ["rewards", "versions", id] as const,
  version: (id: number, number: number) => ["rewards", "version", id, number] as const,
  templates: ["rewards", "templates"] as const,
  testRuns: (functionId: number) => ["rewards", "test-runs", functionId] as const,
  testRun: (id: number) => ["rewards", "test-run", id] as const,
  comparison: (a: number, b: number) => ["rewards", "comparison", a, b] as const,
  check: (code: string) => ["rewards", "check", code] as const,
};

export async function listFunctions(project: string, signal?: AbortSignal): Promise<RewardFunction[]> {
  const page = await unwrap(
    api.GET("/api/reward-functions/", { params: { query: { project, page_size: 200 } }, signal }),
  );
  return page.results;
}

export function getFunction(id: number, signal?: AbortSignal): Promise<RewardFunction> {
  return unwrap(api.GET("/api/reward-functions/{id}/", { params: { path: { id } }, signal }));
}

export function createFunction(body: Schemas["RewardFunctionCreateRequest"]): Promise<RewardFunction> {
  return unwrap(api.POST("/api/reward-functions/", { body }));
}

export function listTemplates(signal?: AbortSignal): Promise<RewardTemplate[]> {
  return unwrap(api.GET("/api/reward-templates/", { signal }));
}

export function listVersions(functionId: number, signal?: AbortSignal): Promise<RewardVersionSummary[]> {
  return unwrap(
    api.GET("/api/reward-functions/{function_id}/versions/", {
      params: { path: { function_id: functionId } },
      signal,
    }),
  );
}

export function getVersion(functionId: number, number: number, signal?: AbortSignal): Promise<RewardVersion> {
  return unwrap(
    api.GET("/api/reward-functions/{function_id}/versions/{number}/", {
      params: { path: { function_id: functionId, number } },
      signal,
    }),
  );
}

export function saveVersion(functionId: number, code: string, message: string): Promise<RewardVersion> {
  return unwrap(
    api.POST("/api/reward-functions/{function_id}/versions/", {
      params: { path: { function_id: functionId } },
      body: { code, message, entrypoint: ENTRYPOINT },
    }),
  );
}

export function checkCode(code: string, signal?: AbortSignal): Promise<RewardCheck> {
  return unwrap(api.POST("/api/reward-checks/", { body: { code, entrypoint: ENTRYPOINT }, signal }));
}

export function startTestRun(body: TestRunRequest): Promise<TestRun> {
  return unwrap(api.POST("/api/reward-test-runs/", { body }));
}

export function getTestRun(id: number, signal?: AbortSignal): Promise<TestRun> {
  return unwrap(api.GET("/api/reward-test-runs/{id}/", { params: { path: { id } }, signal }));
}

export async function listTestRuns(functionId: number, signal?: AbortSignal): Promise<TestRunSummary[]> {
  const page = await unwrap(
    api.GET("/api/reward-test-runs/", {
      params: { query: { function: functionId, page_size: 20 } },
      signal,
    }),
  );
  return page.results;
}

export function startComparison(baseTestRun: number, rewardVersion: number): Promise<TestRun> {
  return unwrap(
    api.POST("/api/reward-comparisons/", {
      body: { base_test_run: baseTestRun, reward_version: rewardVersion },
    }),
  );
}

export function getComparison(a: number, b: number, signal?: AbortSignal): Promise<Comparison> {
  return unwrap(api.GET("/api/reward-comparisons/", { params: { query: { a, b } }, signal }));
}

export function isFinished(run: Pick<TestRun, "status">): boolean {
  return run.status === "succeeded" || run.status === "failed";
}
