/** Sizes for people: parameter counts and bytes, short. */

/** A parameter count as people say it: 3_300_000 -> "3.3M", 494_032_768 -> "494M", 1.5e9 -> "1.5B". */
export function formatParameters(count: number | null): string {
  if (count === null || count < 0) return "–";
  const units: [number, string][] = [
    [1e12, "T"],
    [1e9, "B"],
    [1e6, "M"],
    [1e3, "K"],
  ];
  for (const [size, suffix] of units) {
    if (count >= size) return `${compact(count / size)}${suffix}`;
  }
  return String(count);
}

/** Bytes in binary units: 1536 -> "1.5 KiB". */
export function formatBytes(bytes: number | null): string {
  if (bytes === null || !Number.isFinite(bytes) || bytes < 0) return "–";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${value} B` : `${value >= 100 ? value.toFixed(0) : value.toFixed(1)} ${units[unit]}`;
}

/** Three significant digits at most, no trailing ".0": 3.34 -> "3.3", 494.03 -> "494", 12.46 -> "12.5". */
function compact(value: number): string {
  const digits = value >= 100 ? 0 : 1;
  const rounded = Number(value.toFixed(digits));
  // 999.6K rounds to "1000K": say "1000" rather than bumping units; rare and still true.
  return String(rounded);
}
