import { Button } from "../../../components/Button";
import ui from "../../../components/ui.module.css";
import { Notice } from "../../../components/Notice";
import { Time } from "../../../components/Time";
import type { SampleLabel } from "../../samples/api";
import { useLabelToggle } from "../../samples/hooks";
import styles from "./LabelButtons.module.css";
import review from "./review.module.css";

/** The labels number keys 1-4 toggle, in order. */
export const QUICK_LABELS = ["good", "bad", "reward-hacking", "flag"] as const;

type Props = {
  sample: number;
  labels: readonly SampleLabel[];
  me: string | null;
  onChanged?: () => void;
};

/** Your labels on a sample (toggle with the buttons or keys 1-4) and everyone's, with when. */
export function LabelButtons({ sample, labels, me, onChanged }: Props) {
  const toggle = useLabelToggle();
  const mine = new Set(labels.filter((l) => me === null || l.author === me).map((l) => l.label));
  return (
    <div className={review.section}>
      <div className={review.buttons} role="group" aria-label="Labels">
        {QUICK_LABELS.map((label, i) => {
          const on = mine.has(label);
          return (
            <Button
              key={label}
              aria-pressed={on}
              className={on ? styles.labelOn : undefined}
              disabled={toggle.isPending}
              onClick={() =>
                toggle.mutate({ sample, label, on: !on }, { onSuccess: () => onChanged?.() })
              }
            >
              <span className={review.kbd}>{i + 1}</span> {label}
            </Button>
          );
        })}
      </div>
      {toggle.error ? <Notice tone="error">{toggle.error.message}</Notice> : null}
      {labels.length ? (
        <ul className={ui.muted} aria-label="Who labelled this">
          {labels.map((l) => (
            <li key={l.id}>
              <strong>{l.label}</strong> by {l.author}, <Time value={l.created_at} />
              {l.note ? `: ${l.note}` : ""}
            </li>
          ))}
        </ul>
      ) : (
        <span className={ui.muted}>No labels yet.</span>
      )}
    </div>
  );
}
