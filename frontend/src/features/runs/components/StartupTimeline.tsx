import { useState } from "react";

import { inputClass } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import { useNow } from "../../../lib/useNow";
import type { RunDetail } from "../api";
import { formatSeconds, waterfall, type Startup, type WaterfallRow } from "../lib/startup";
import styles from "./StartupTimeline.module.css";

type Attempt = RunDetail["attempts"][number];

/**
 * Where the seconds from Create to the first chart point went, for one attempt of the run:
 * a table of phases (what each took, and when since Create), each with a bar on a shared
 * scale, so the long ones stand out. While the run starts, phases appear as the studio and
 * the trainer mark them (the run's live stream refreshes the run).
 */
export function StartupTimeline({ run }: { run: RunDetail }) {
  const [chosen, setChosen] = useState<number | null>(null);
  const attempts = run.attempts;
  const attempt = attempts.find((a) => a.number === chosen) ?? attempts.at(-1);
  return (
    <section aria-labelledby={`startup-${run.id}`} className={styles.panel} data-testid="startup-timeline">
      <div className={styles.heading}>
        <h3 id={`startup-${run.id}`} className={styles.title}>
          Startup
        </h3>
        {attempts.length > 1 && attempt ? (
          <label className={ui.row}>
            Attempt
            <select className={inputClass} value={attempt.number} onChange={(e) => setChosen(Number(e.target.value))}>
              {attempts.map((a) => (
                <option key={a.number} value={a.number}>
                  {a.number}
                </option>
              ))}
            </select>
          </label>
        ) : null}
      </div>
      {/* A resumed run waits in the queue again: its new attempt has no timeline yet. */}
      {run.status === "queued" || !attempt ? <NotStarted run={run} /> : null}
      {attempt ? <AttemptStartup run={run} attempt={attempt} latest={attempt === attempts.at(-1)} /> : null}
    </section>
  );
}

function NotStarted({ run }: { run: RunDetail }) {
  const again = run.attempts.length > 0;
  return (
    <p className={ui.muted} data-state="not-started">
      {run.status !== "queued"
        ? "This run never started, so it has no startup timeline."
        : again
          ? `Queued again: attempt ${run.attempts.length + 1}'s timeline begins when the queue starts it. Below, attempt ${run.attempts.length}'s.`
          : "Queued: the timeline begins when the queue starts this run, and its phases appear here as they happen."}
    </p>
  );
}

/** The run's current attempt is this one, still starting: it is drawn up to now. */
const STARTED: RunDetail["status"][] = ["starting", "running"];

function AttemptStartup({ run, attempt, latest }: { run: RunDetail; attempt: Attempt; latest: boolean }) {
  const startup = attempt.startup;
  const live = latest && STARTED.includes(run.status) && startup?.total_s === null;
  const now = useNow(live);
  if (!startup) {
    return (
      <p className={ui.muted} data-state="none">
        No startup timeline recorded: attempt {attempt.number} ran before the studio recorded one.
      </p>
    );
  }
  return <Waterfall startup={startup} attempt={attempt.number} nowSeconds={live ? now / 1000 : null} />;
}

function Waterfall({ startup, attempt, nowSeconds }: { startup: Startup; attempt: number; nowSeconds: number | null }) {
  const shown = waterfall(startup, nowSeconds);
  const live = nowSeconds !== null;
  const next = live ? shown.rows.find((r) => r.offset === null) : undefined;
  const lastEnd = shown.elapsed / shown.scale;
  return (
    <>
      <p className={styles.summary} data-state={shown.total !== null ? "complete" : live ? "starting" : "ended"}>
        {shown.total !== null ? (
          <>
            Create to first metric: <strong>{formatSeconds(shown.total)}</strong>
          </>
        ) : live ? (
          <>
            Starting: <strong>{formatSeconds(shown.scale)}</strong> so far
          </>
        ) : (
          <>Ended before its first metric was stored.</>
        )}
      </p>
      <div className={styles.tableWrap}>
        <table className={styles.table} aria-label={`Startup phases of attempt ${attempt}`}>
          <thead>
            <tr>
              <th scope="col">Phase</th>
              <th scope="col">Took</th>
              <th scope="col" className={styles.numeric}>
                Since Create
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.rows.map((row) => (
              <PhaseRow key={row.name} row={row} waiting={row === next ? { start: lastEnd, width: Math.max(0, 1 - lastEnd) } : null} live={live} />
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

type Span = { start: number; width: number };

function PhaseRow({ row, waiting, live }: { row: WaterfallRow; waiting: Span | null; live: boolean }) {
  const reached = row.offset !== null;
  const bar = row.bar ?? waiting;
  // The bar is drawn twice, one shown by width: beside the seconds on a wide screen, under
  // the phase's name on a narrow one (where the seconds' column leaves it no room).
  return (
    <tr data-phase={row.name} data-reached={reached} className={reached ? undefined : styles.pending}>
      <th scope="row">
        {row.label}
        <Track bar={bar} reached={reached} className={styles.narrowTrack} />
      </th>
      <td>
        <div className={styles.took}>
          <Track bar={bar} reached={reached} className={styles.track} />
          <span className={styles.seconds}>{reached ? (row.seconds === null ? "start" : formatSeconds(row.seconds)) : waiting ? "waiting…" : live ? "" : "not reached"}</span>
        </div>
      </td>
      <td className={styles.numeric}>{row.offset === null ? "—" : formatSeconds(row.offset)}</td>
    </tr>
  );
}

/** One phase's bar on the shared scale (decorative: the row's text says the same). */
function Track({ bar, reached, className }: { bar: Span | null; reached: boolean; className: string | undefined }) {
  return (
    <span className={className} aria-hidden="true">
      {bar ? <span className={`${styles.bar} ${reached ? "" : styles.waitingBar}`} style={{ left: `${bar.start * 100}%`, width: `max(2px, ${bar.width * 100}%)` }} /> : null}
    </span>
  );
}
