import { useState, type KeyboardEvent } from "react";

import { Button } from "../../../components/Button";
import styles from "../playground.module.css";

type ComposerProps = {
  answering: boolean;
  disabled: boolean;
  onSend: (message: string) => void;
  onStop: () => void;
};

/** The message box: Enter sends, Shift+Enter starts a new line; Stop while a reply is written. */
export function Composer({ answering, disabled, onSend, onStop }: ComposerProps) {
  const [draft, setDraft] = useState("");
  const canSend = !disabled && !answering && draft.trim().length > 0;
  const send = () => {
    if (!canSend) return;
    onSend(draft);
    setDraft("");
  };
  const onKeyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      send();
    }
  };
  return (
    <form
      className={styles.composer}
      aria-label="Send a message"
      onSubmit={(event) => {
        event.preventDefault();
        send();
      }}
    >
      <textarea
        className={styles.message}
        aria-label="Message"
        placeholder="Message the model…"
        rows={1}
        value={draft}
        onChange={(event) => setDraft(event.target.value)}
        onKeyDown={onKeyDown}
      />
      <span className={styles.hint}>Enter sends · Shift+Enter new line</span>
      {answering ? (
        <Button onClick={onStop}>Stop</Button>
      ) : (
        <Button variant="primary" type="submit" disabled={!canSend}>
          Send
        </Button>
      )}
    </form>
  );
}
