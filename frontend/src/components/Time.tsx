import { formatTime, type Instant, type TimeStyle } from "../lib/time";

type TimeProps = {
  value: Instant | null | undefined;
  /** How much to show (default: day and time). */
  format?: TimeStyle;
  /** What a missing instant reads as ("never", "not yet"); "—" if not said. */
  empty?: string;
  className?: string;
};

/**
 * An instant as the studio shows it: `<time>` with the ISO value for machines and the full
 * local date and time on hover (an age or a bare day hides the rest).
 */
export function Time({ value, format = "datetime", empty = "—", className }: TimeProps) {
  const shown = formatTime(value, format);
  if (value === null || value === undefined || shown === "—") return <span className={className}>{empty}</span>;
  const date = value instanceof Date ? value : new Date(value);
  return (
    <time className={className} dateTime={date.toISOString()} title={format === "datetime" ? undefined : date.toLocaleString()}>
      {shown}
    </time>
  );
}
