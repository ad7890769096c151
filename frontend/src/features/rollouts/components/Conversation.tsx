import { countOf } from "../../../lib/plural";
import type { Turn } from "../../samples/api";
import styles from "./Conversation.module.css";
import { FoldedText, formatScore } from "./SampleText";

const ROLE_NAMES: Record<Turn["role"], string> = { assistant: "assistant", tool: "tool result", user: "user" };

/** Arguments as indented JSON (the model wrote them; keep its keys in order). */
export function prettyArguments(args: Record<string, unknown>): string {
  return JSON.stringify(args, null, 2);
}

function RewardChip({ reward }: { reward: number | null }) {
  if (reward === null) return null;
  const tone = reward > 0 ? styles.rewardUp : reward < 0 ? styles.rewardDown : styles.rewardZero;
  return (
    <span className={`${styles.reward} ${tone}`} data-testid="turn-reward">
      reward {reward > 0 ? "+" : ""}
      {formatScore(reward)}
    </span>
  );
}

function TurnView({ turn, index }: { turn: Turn; index: number }) {
  const failed = turn.role === "tool" && turn.error !== null;
  const who = turn.role === "tool" && turn.name ? `${ROLE_NAMES.tool} · ${turn.name}` : ROLE_NAMES[turn.role];
  return (
    <li
      className={`${styles.turn} ${styles[turn.role]} ${failed ? styles.failed : ""}`}
      data-role={turn.role}
      aria-label={`Turn ${index + 1}: ${who}${failed ? " (failed)" : ""}`}
    >
      <div className={styles.head}>
        <span className={styles.index}>{index + 1}</span>
        <span className={styles.who}>{ROLE_NAMES[turn.role]}</span>
        {turn.role === "tool" && turn.name ? <code className={styles.toolName}>{turn.name}</code> : null}
        {failed ? <span className={styles.errorTag}>error</span> : null}
        <RewardChip reward={turn.reward} />
      </div>
      {turn.content || (!failed && turn.tool_calls.length === 0) ? (
        <FoldedText text={turn.content} label={`turn ${index + 1} ${turn.role}`} />
      ) : null}
      {failed ? (
        <pre className={styles.error} role="alert" aria-label={`turn ${index + 1} error`}>
          {turn.error}
        </pre>
      ) : null}
      {turn.tool_calls.map((call, i) => (
        <div key={i} className={styles.call} data-testid="tool-call">
          <div className={styles.callHead}>
            calls <code className={styles.toolName}>{call.name}</code>
          </div>
          <pre className={styles.arguments} aria-label={`arguments of ${call.name}`}>
            {prettyArguments(call.arguments)}
          </pre>
        </div>
      ))}
    </li>
  );
}

/** A multi-turn episode after the prompt: assistant messages, the tools they called and
 * what the tools answered (failures as errors), user turns, and each turn's reward. */
export function Conversation({ turns }: { turns: Turn[] }) {
  const calls = turns.reduce((n, t) => n + t.tool_calls.length, 0);
  const errors = turns.filter((t) => t.role === "tool" && t.error !== null).length;
  return (
    <section aria-label="Conversation" data-testid="conversation">
      <p className={styles.summary}>
        {countOf(turns.length, "turn")} · {countOf(calls, "tool call")}
        {errors ? ` · ${errors} failed` : ""}
      </p>
      <ol className={styles.turns}>
        {turns.map((turn, i) => (
          <TurnView key={i} turn={turn} index={i} />
        ))}
      </ol>
    </section>
  );
}
