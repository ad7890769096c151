import { useState } from "react";

import { Button } from "../../../components/Button";
import ui from "../../../components/ui.module.css";
import { chatMessages, isLong } from "../lib/chat";
import review from "./review.module.css";
import styles from "./SampleText.module.css";

/** Long text folded (with a button to unfold), whitespace kept as written. */
export function FoldedText({ text, label }: { text: string; label: string }) {
  const long = isLong(text);
  const [open, setOpen] = useState(!long);
  return (
    <div>
      <pre className={`${review.text} ${open ? "" : styles.folded}`} aria-label={label}>
        {text || <span className={ui.muted}>(empty)</span>}
      </pre>
      {long ? (
        <Button onClick={() => setOpen(!open)} aria-expanded={open}>
          {open ? "Fold" : `Show all (${text.length.toLocaleString()} characters)`}
        </Button>
      ) : null}
    </div>
  );
}

/** A prompt as chat messages with their roles. */
export function PromptView({ prompt }: { prompt: string }) {
  const messages = chatMessages(prompt).filter((m) => m.role !== "assistant" || m.content);
  return (
    <div>
      {messages.map((message, i) => (
        <div key={i}>
          {message.role ? <div className={styles.role}>{message.role}</div> : null}
          <FoldedText text={message.content} label={`prompt ${message.role ?? "text"}`} />
        </div>
      ))}
    </div>
  );
}

/** A score with three decimals, whole ones too, so a list's scores line up ("1.000"
 * beside "0.100"). */
export function formatScore(score: number | null | undefined): string {
  if (score === null || score === undefined) return "–";
  return score.toFixed(3);
}

/** The sample's finish reason, flagged when the response hit the length limit. */
export function FinishPill({ reason }: { reason: string }) {
  if (!reason) return null;
  return <span className={reason === "length" ? `${ui.pill} ${ui.warn}` : ui.pill}>{reason}</span>;
}

/** Reward components (the dict a reward function returned beyond `score`). */
export function componentEntries(components: unknown): [string, number | null][] {
  if (typeof components !== "object" || components === null) return [];
  return Object.entries(components as Record<string, unknown>).map(([key, value]) => [
    key,
    typeof value === "number" ? value : null,
  ]);
}
