import { useNavigate } from "react-router";

import { Button, ButtonLink } from "../../../components/Button";
import { useToast } from "../../../components/Toast";
import { useEvaluateRunCheckpoints } from "../hooks";

type Props = { run: { id: number; kind?: string }; slug: string };

/**
 * The run page's "Evaluate checkpoints": one evaluation of every checkpoint of the run and
 * its base model on the run's validation data, then its page. An evaluation's own run page
 * links back to its results instead.
 */
export function EvaluateCheckpointsButton({ run, slug }: Props) {
  const evaluate = useEvaluateRunCheckpoints();
  const navigate = useNavigate();
  const toast = useToast();
  if (run.kind === "evaluation") {
    return <ButtonLink to={`/p/${slug}/evaluations/${run.id}`}>Evaluation results</ButtonLink>;
  }
  return (
    <Button
      disabled={evaluate.isPending}
      onClick={() =>
        evaluate.mutate(
          { run: run.id, k: 1, greedy: true, temperature: 1, priority: 0 },
          {
            onSuccess: (created) => void navigate(`/p/${slug}/evaluations/${created.id}`),
            onError: (error) => toast.error(error),
          },
        )
      }
    >
      {evaluate.isPending ? "Queueing…" : "Evaluate checkpoints"}
    </Button>
  );
}
