import { useEffect, useRef } from "react";

import { Notice } from "../../../components/Notice";
import { Spinner } from "../../../components/Spinner";
import type { PlaygroundModel } from "../api";
import { statsLine, type Column, type Turn } from "../lib/chat";
import styles from "../playground.module.css";
import { ScoreReply } from "./ScoreReply";
import { ServerState } from "./ServerState";

const WAITING: Partial<Record<NonNullable<Turn["state"]>, string>> = {
  loading: "Loading model… (the first message to a model waits for it to load)",
  queued: "Waiting for the model…",
  generating: "Writing…",
};

function Reply({ turn, slug }: { turn: Turn; slug: string }) {
  const writing = turn.state === "generating" && turn.content.length > 0;
  const waiting = WAITING[turn.state ?? "done"];
  return (
    <div className={`${styles.bubble} ${styles.assistant}`} data-testid="reply" data-state={turn.state} aria-busy={Boolean(waiting)}>
      {turn.content ? <span className={writing ? styles.caret : undefined}>{turn.content}</span> : null}
      {waiting && !turn.content ? (
        <span className={styles.waiting} role="status">
          <Spinner label={waiting} />
          {waiting}
        </span>
      ) : null}
      {turn.state === "error" ? <Notice tone="error">{turn.error ?? "The reply failed."}</Notice> : null}
      {turn.stats ? (
        <div className={styles.stats}>
          {turn.state === "stopped" ? "Stopped. " : ""}
          {statsLine(turn.stats)}
        </div>
      ) : null}
      {turn.state === "done" && turn.content ? <ScoreReply slug={slug} reply={turn.content} /> : null}
    </div>
  );
}

/** One model's conversation: its name and state, then the turns, newest at the bottom. */
export function ChatColumn({ column, model, slug }: { column: Column; model: PlaygroundModel | undefined; slug: string }) {
  const turns = useRef<HTMLDivElement>(null);
  const last = column.turns[column.turns.length - 1];
  // Follow the reply as it grows: scroll the conversation, never the page around it.
  useEffect(() => {
    const box = turns.current;
    if (box) box.scrollTop = box.scrollHeight;
  }, [column.turns.length, last?.content]);
  const title = model?.label ?? column.target;
  return (
    <section className={styles.column} aria-label={`Chat with ${title}`}>
      <header className={styles.columnHead}>
        <h2 className={styles.columnTitle}>{title}</h2>
        <ServerState model={model} />
        {model ? <span className={styles.detail}>{model.detail}</span> : null}
      </header>
      <div className={styles.turns} ref={turns} aria-live="polite">
        {column.turns.length === 0 ? <p className={styles.empty}>Send a message to start the conversation.</p> : null}
        {column.turns.map((turn, i) =>
          turn.role === "user" ? (
            <div key={i} className={`${styles.bubble} ${styles.user}`} data-testid="user-message">
              {turn.content}
            </div>
          ) : (
            <Reply key={i} turn={turn} slug={slug} />
          ),
        )}
      </div>
    </section>
  );
}
