/** Dotted-path views of config trees, for diffs (run vs parent or preset, compare page). */

export type ConfigTree = Record<string, unknown>;

export function isTree(value: unknown): value is ConfigTree {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** {a: {b: 1}} -> {"a.b": 1}; arrays are leaves. */
export function flatten(tree: unknown, prefix = ""): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!isTree(tree)) return prefix ? { [prefix]: tree } : out;
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isTree(value)) Object.assign(out, flatten(value, path));
    else out[path] = value;
  }
  return out;
}

export function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The paths where the configs do not all agree, with each config's value. */
export function differingPaths(configs: unknown[]): { path: string; values: unknown[] }[] {
  const flat = configs.map((c) => flatten(c));
  const paths = new Set(flat.flatMap((f) => Object.keys(f)));
  return [...paths]
    .sort()
    .map((path) => ({ path, values: flat.map((f) => f[path]) }))
    .filter(({ values }) => values.some((v) => !same(v, values[0])));
}

/** The part of `tree` that differs from `base`, as a partial tree (what a form changed). */
export function changedTree(tree: ConfigTree, base: ConfigTree): ConfigTree {
  const out: ConfigTree = {};
  for (const [key, value] of Object.entries(tree)) {
    const baseValue = base[key];
    if (isTree(value) && isTree(baseValue)) {
      const sub = changedTree(value, baseValue);
      if (Object.keys(sub).length) out[key] = sub;
    } else if (!same(value, baseValue)) {
      out[key] = value;
    }
  }
  return out;
}

export function formatValue(value: unknown): string {
  if (value === undefined) return "—";
  if (typeof value === "string") return value === "" ? '""' : value;
  return JSON.stringify(value);
}
