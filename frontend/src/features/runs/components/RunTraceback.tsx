import { lastUserLine, userLineOf } from "../lib/traceback";
import styles from "./RunTraceback.module.css";

const CONTEXT = 2; // lines of the user's code shown around the failing one

/** The user's reward code around `line`, that line marked. */
export function RewardSource({ code, line }: { code: string; line: number }) {
  const lines = code.split("\n");
  if (line > lines.length) return null;
  const first = Math.max(1, line - CONTEXT);
  const last = Math.min(lines.length, line + CONTEXT);
  return (
    <figure className={styles.source} aria-label={`reward.py, line ${line}`}>
      <figcaption className={styles.sourceTitle}>
        Your reward code, <code>reward.py</code> line {line}
      </figcaption>
      <pre className={styles.code}>
        {lines.slice(first - 1, last).map((text, i) => (
          <code key={first + i} className={styles.codeLine} data-current={first + i === line}>
            <span className={styles.lineNo}>{first + i}</span>
            {text}
          </code>
        ))}
      </pre>
    </figure>
  );
}

/** A traceback's lines, those that point at the user's reward code marked. */
export function TracebackLines({ text }: { text: string }) {
  const lines = text.split("\n");
  return (
    <>
      {lines.map((line, i) => (
        <span key={i}>
          {userLineOf(line) !== null ? (
            <mark className={styles.userFrame} data-user-frame={userLineOf(line)}>
              {line}
            </mark>
          ) : (
            line
          )}
          {i < lines.length - 1 ? "\n" : null}
        </span>
      ))}
    </>
  );
}

/**
 * Why a run failed: the trainer's traceback, and, where it points at the user's reward
 * code (`code`, when the run's reward version is known), that line of the code.
 */
export function RunTraceback({ text, code, label = "Why the run failed", collapsed = false }: { text: string; code?: string; label?: string; collapsed?: boolean }) {
  const line = lastUserLine(text);
  const pre = (
    <pre className={styles.pre}>
      <TracebackLines text={text} />
    </pre>
  );
  return (
    <section className={styles.traceback} aria-label={label}>
      {line !== null && code !== undefined ? <RewardSource code={code} line={line} /> : null}
      {collapsed ? (
        <details>
          <summary className={styles.summary}>The trainer&apos;s traceback</summary>
          {pre}
        </details>
      ) : (
        pre
      )}
    </section>
  );
}
