import { useNavigate, useParams } from "react-router";

import { Button } from "../../../components/Button";
import { Notice } from "../../../components/Notice";
import { errorMessage } from "../../../api/errors";
import { fieldErrorsAt } from "../../../components/Field";
import { useAskCheckpoints } from "../hooks";
import { canAsk } from "../lib/answers";

type Props = { sample: { id: number; split: string; num_turns: number } };

/**
 * The explorer's "Ask the checkpoints" on a training run's sample: a small evaluation in
 * which the base model and every checkpoint of the run answer the sample's prompt, then
 * its page, a column per step. Why it can't be asked (no checkpoint yet, ...) shows here.
 */
export function AskCheckpointsButton({ sample }: Props) {
  const { slug } = useParams();
  const ask = useAskCheckpoints();
  const navigate = useNavigate();
  if (!slug || !canAsk(sample)) return null;
  const reason = ask.error ? refusal(ask.error) : null;
  return (
    <>
      <Button
        disabled={ask.isPending}
        title="Every checkpoint of this run, and its base model, answers this prompt"
        onClick={() =>
          ask.mutate(
            { sample: sample.id, k: 1, greedy: true, temperature: 1, priority: 0 },
            { onSuccess: (created) => void navigate(`/p/${slug}/evaluations/${created.id}`) },
          )
        }
      >
        {ask.isPending ? "Asking…" : "Ask the checkpoints"}
      </Button>
      {reason ? <Notice tone="error">Could not ask the checkpoints: {reason}</Notice> : null}
    </>
  );
}

/** The server's reason: the sample field's message ("Run 3 has no checkpoint ..."). */
function refusal(error: Error): string {
  return fieldErrorsAt(error, "sample").join(" ") || errorMessage(error);
}
