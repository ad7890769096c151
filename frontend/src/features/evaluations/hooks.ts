/** Query and mutation hooks of evaluations (their keys and fetchers live in api.ts). */
import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";

import { useToast } from "../../components/Toast";
import {
  askCheckpoints,
  cancelEvaluation,
  createEvaluation,
  evaluateRunCheckpoints,
  evaluationKeys,
  getEvaluation,
  listEvaluations,
  type AskCheckpointsCreate,
  type EvaluationCreate,
  type EvaluationDetail,
  type RunCheckpointsCreate,
} from "./api";
import { runKeys } from "../runs/api";
import { isLive } from "./lib/results";

/** How often a queued or running evaluation is asked for again. */
export const POLL_MS = 2000;

export function useEvaluations(project: string) {
  return useQuery({
    queryKey: evaluationKeys.list(project),
    queryFn: ({ signal }) => listEvaluations(project, signal),
    enabled: Boolean(project),
    refetchInterval: (query) => (query.state.data?.some((e) => isLive(e.status)) ? POLL_MS : false),
  });
}

/** One evaluation with its results; polled while it is queued, starting or running.
 * `enabled` false: not asked for (the explorer asks only when its run is an evaluation). */
export function useEvaluation(id: number, enabled = true) {
  return useQuery({
    queryKey: evaluationKeys.detail(id),
    queryFn: ({ signal }) => getEvaluation(id, signal),
    enabled,
    refetchInterval: (query) => (!query.state.data || isLive(query.state.data.status) ? POLL_MS : false),
  });
}

function useCreated() {
  const queryClient = useQueryClient();
  return (created: EvaluationDetail) => {
    queryClient.setQueryData(evaluationKeys.detail(created.id), created);
    return queryClient.invalidateQueries({ queryKey: evaluationKeys.list(created.project) });
  };
}

export function useCreateEvaluation() {
  const onSuccess = useCreated();
  return useMutation({ mutationFn: (body: EvaluationCreate) => createEvaluation(body), onSuccess });
}

/** "Evaluate checkpoints" of a run: one evaluation of its checkpoints and base model. */
export function useEvaluateRunCheckpoints() {
  const onSuccess = useCreated();
  return useMutation({ mutationFn: (body: RunCheckpointsCreate) => evaluateRunCheckpoints(body), onSuccess });
}

/** "Ask the checkpoints" of a sample: a small evaluation of its one prompt. */
export function useAskCheckpoints() {
  const onSuccess = useCreated();
  return useMutation({ mutationFn: (body: AskCheckpointsCreate) => askCheckpoints(body), onSuccess });
}

export function useCancelEvaluation(id: number) {
  const queryClient = useQueryClient();
  const toast = useToast();
  return useMutation({
    mutationFn: () => cancelEvaluation(id),
    onSuccess: (evaluation) => {
      queryClient.setQueryData(evaluationKeys.detail(id), evaluation);
      toast.show(`Evaluation ${evaluation.status}`, "success");
      // The run it is (its header in the explorer, the runs lists) shows the status too.
      void queryClient.invalidateQueries({ queryKey: runKeys.detail(id), exact: true });
      void queryClient.invalidateQueries({ queryKey: runKeys.lists(evaluation.project) });
      return queryClient.invalidateQueries({ queryKey: evaluationKeys.list(evaluation.project) });
    },
    onError: (error) => toast.error(error),
  });
}
