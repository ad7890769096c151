/**
 * Instants for people, one way across the app: every date the studio shows goes through
 * `formatTime` (or the `Time` component, which adds the machine-readable `<time>` and the
 * full instant on hover). Locale-aware (the browser's language and time zone), since the
 * studio is read by people in many places.
 */

/** How much of an instant to show: its day, its day and time, its time of day, or how long ago. */
export type TimeStyle = "date" | "datetime" | "clock" | "age";

/** What the API and the browser hand us: an ISO string, epoch milliseconds, or a Date. */
export type Instant = string | number | Date;

function toDate(value: Instant): Date | null {
  const date = value instanceof Date ? value : new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** "3 min", "2 h 5 min": how long between two instants (or until `now`); "—" when unknown. */
export function formatDuration(from: Instant | null, to: Instant | null, now = Date.now()): string {
  if (from === null) return "—";
  const start = toDate(from);
  const end = to === null ? new Date(now) : toDate(to);
  if (!start || !end) return "—";
  const ms = end.getTime() - start.getTime();
  if (ms < 0) return "—";
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d`;
}

/**
 * An instant in the chosen style; "—" for an instant that is missing or unreadable (the
 * caller says what a missing one means, e.g. "never", through `Time`'s `empty`).
 */
export function formatTime(value: Instant | null | undefined, style: TimeStyle = "datetime", now = Date.now()): string {
  if (value === null || value === undefined || value === "") return "—";
  const date = toDate(value);
  if (!date) return "—";
  switch (style) {
    case "date":
      return date.toLocaleDateString();
    case "datetime":
      return date.toLocaleString();
    case "clock":
      return date.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    case "age": {
      const d = formatDuration(date, null, now);
      return d === "—" ? d : `${d} ago`;
    }
  }
}
