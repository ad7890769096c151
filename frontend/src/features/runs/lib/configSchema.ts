/**
 * Reads the RunConfig JSON schema (`/api/config/schema`, pydantic's
 * `model_json_schema()`) into form sections. The form is generated from this, never
 * from a hand-written copy of the config.
 */
import { isTree, type ConfigTree } from "./configDiff";

type Schema = {
  type?: string;
  enum?: (string | number)[];
  anyOf?: Schema[];
  $ref?: string;
  properties?: Record<string, Schema>;
  items?: Schema;
  prefixItems?: Schema[];
  description?: string;
  title?: string;
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  $defs?: Record<string, Schema>;
  format?: string;
  "x-studio-resource"?: string;
};

export type FieldKind =
  | { type: "number"; integer: boolean; nullable: boolean; min?: number; max?: number }
  | { type: "boolean" }
  | { type: "enum"; options: (string | number)[]; nullable: boolean }
  | { type: "string"; nullable: boolean }
  | { type: "list"; item: "string" | "number" }
  | { type: "tuple"; length: number }
  | { type: "json" };

export type FieldSpec = {
  /** Dotted path from the config's root, e.g. "actor.optim.lr": the server's error key is "config." + this. */
  path: string;
  label: string;
  description: string;
  kind: FieldKind;
};

export type Section = { name: string; title: string; description: string; fields: FieldSpec[] };

function resolveRef(schema: Schema, root: Schema): Schema {
  if (!schema.$ref) return schema;
  const name = schema.$ref.split("/").pop() ?? "";
  return root.$defs?.[name] ?? {};
}

/** The markers the server puts on a field naming a file, folder or URL (refused over the API). */
const PATH_FORMATS = new Set(["server-path", "path-or-url"]);

function marked(schema: Schema | undefined): boolean {
  if (!schema) return false;
  return (schema.format !== undefined && PATH_FORMATS.has(schema.format)) || schema["x-studio-resource"] !== undefined;
}

/**
 * A field that names a file, folder or URL: its schema, its `items`, or a member of its
 * `anyOf` (or that member's `items`) carries `format: server-path | path-or-url` or
 * `x-studio-resource`. A run chooses these through its inputs (model, dataset, reward...),
 * so the form leaves them out.
 */
export function isPathField(schema: Schema): boolean {
  return [schema, ...(schema.anyOf ?? [])].some((s) => marked(s) || marked(s.items));
}

/**
 * Every path field's dotted place, a list of sections stepped into with `*` for its index:
 * ["model.path", "data.train_files", "reward.extra_models.*.path", ...].
 */
export function pathFieldsOf(schema: Record<string, unknown>): string[] {
  const root = schema as Schema;
  const out: string[] = [];
  const walk = (node: Schema, prefix: string, depth: number) => {
    if (depth > 8) return; // a recursive schema: stop
    for (const [key, raw] of Object.entries(node.properties ?? {})) {
      const path = prefix ? `${prefix}.${key}` : key;
      if (isPathField(raw)) {
        out.push(path);
        continue;
      }
      const resolved = resolveRef(raw, root);
      if (resolved.properties) walk(resolved, path, depth + 1);
      for (const option of [resolved, ...(resolved.anyOf ?? [])]) {
        const item = option.items ? resolveRef(option.items, root) : undefined;
        if (option.type === "array" && item?.properties) walk(item, `${path}.*`, depth + 1);
      }
    }
  };
  walk(root, "", 0);
  return out;
}

/** Whether a config error key ("data.train_files.0", "reward.extra_models.1.path") is at a path field. */
export function atPathField(key: string, pathFields: string[]): boolean {
  const parts = key.split(".");
  return pathFields.some((pattern) => {
    const steps = pattern.split(".");
    return steps.length <= parts.length && steps.every((step, i) => step === parts[i] || (step === "*" && /^\d+$/.test(parts[i] ?? "")));
  });
}

function kindOf(schema: Schema): FieldKind {
  const options = schema.anyOf ?? [];
  const nonNull = options.filter((o) => o.type !== "null");
  const nullable = options.length > 0 && nonNull.length < options.length;
  const base = nullable && nonNull.length === 1 && nonNull[0] ? { ...nonNull[0] } : schema;
  if (base.enum) return { type: "enum", options: base.enum, nullable };
  if (base.type === "integer" || base.type === "number") {
    return {
      type: "number",
      integer: base.type === "integer",
      nullable,
      min: base.minimum ?? base.exclusiveMinimum,
      max: base.maximum ?? base.exclusiveMaximum,
    };
  }
  if (base.type === "boolean") return { type: "boolean" };
  if (base.type === "string") return { type: "string", nullable };
  if (base.type === "array" && base.prefixItems) return { type: "tuple", length: base.prefixItems.length };
  // A list of sections (objects) has no one-line form: it is edited as JSON.
  if (base.type === "array" && (base.items?.$ref || base.items?.type === "object")) return { type: "json" };
  if (base.type === "array") return { type: "list", item: base.items?.type === "number" || base.items?.type === "integer" ? "number" : "string" };
  return { type: "json" };
}

function collect(schema: Schema, root: Schema, prefix: string, out: FieldSpec[]): void {
  for (const [key, raw] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (isPathField(raw)) continue; // chosen as one of the run's inputs, never typed
    const resolved = resolveRef(raw, root);
    if (resolved.properties) {
      collect(resolved, root, path, out);
      continue;
    }
    out.push({ path, label: path.split(".").slice(1).join(".") || key, description: raw.description ?? resolved.description ?? "", kind: kindOf(raw) });
  }
}

/**
 * One section per top-level config group (model, data, rollout, algorithm, ...), without
 * the path fields (`isPathField`); a group left with no field is left out.
 */
export function sectionsOf(schema: Record<string, unknown>): Section[] {
  const root = schema as Schema;
  return Object.entries(root.properties ?? {})
    .filter(([, raw]) => !isPathField(raw))
    .map(([name, raw]) => {
      const group = resolveRef(raw, root);
      const fields: FieldSpec[] = [];
      if (group.properties) collect(group, root, name, fields);
      else fields.push({ path: name, label: name, description: raw.description ?? "", kind: kindOf(raw) });
      return { name, title: name.replace(/_/g, " "), description: raw.description ?? group.description ?? "", fields };
    })
    .filter((section) => section.fields.length > 0);
}

export function getAt(tree: unknown, path: string): unknown {
  let node: unknown = tree;
  for (const part of path.split(".")) {
    if (!isTree(node)) return undefined;
    node = node[part];
  }
  return node;
}

/** A copy of `tree` with `value` at `path` (creating the branches it needs). */
export function setAt(tree: ConfigTree, path: string, value: unknown): ConfigTree {
  const [head, ...rest] = path.split(".");
  if (!head) return tree;
  if (!rest.length) return { ...tree, [head]: value };
  const child = isTree(tree[head]) ? (tree[head] as ConfigTree) : {};
  return { ...tree, [head]: setAt(child, rest.join("."), value) };
}

/**
 * What the user typed, as the value to send. Text that is not a number is sent as is:
 * the server's validation names the field and the problem, and the form shows it there.
 */
export function parseInput(kind: FieldKind, text: string): unknown {
  if (kind.type === "number") {
    if (text.trim() === "") return kind.nullable ? null : text;
    const value = Number(text);
    return Number.isFinite(value) ? value : text;
  }
  if (kind.type === "string") return kind.nullable && text === "" ? null : text;
  if (kind.type === "enum") {
    if (kind.nullable && text === "") return null;
    const match = kind.options.find((o) => String(o) === text);
    return match ?? text;
  }
  if (kind.type === "list") {
    const items = text.split("\n").map((s) => s.trim()).filter(Boolean);
    return kind.item === "number" ? items.map((s) => (Number.isFinite(Number(s)) ? Number(s) : s)) : items;
  }
  if (kind.type === "tuple") return text.split(",").map((s) => (Number.isFinite(Number(s.trim())) ? Number(s.trim()) : s.trim()));
  if (kind.type === "json") {
    try {
      return JSON.parse(text) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

/** The text an input shows for a value. */
export function formatInput(kind: FieldKind, value: unknown): string {
  if (value === null || value === undefined) return "";
  if (kind.type === "list" && Array.isArray(value)) return value.map(String).join("\n");
  if (kind.type === "tuple" && Array.isArray(value)) return value.map(String).join(", ");
  if (kind.type === "json") return JSON.stringify(value);
  return String(value);
}

export type PlacedErrors = {
  /** By field path: the field the error is at, or the field holding it (a list's item). */
  fields: Record<string, string[]>;
  /** By section name: errors about a whole group ("reward": its sources' names clash). */
  sections: Record<string, string[]>;
  /** Errors about the whole config (a rule between groups). */
  general: string[];
};

/**
 * Puts each server error (keyed by config path, "" for the whole config) where the form can
 * show it: at its field; at the field holding it with the rest of the path in front
 * ("reward.extra_models.0.weight" -> reward.extra_models: "0.weight: ..."); at its section;
 * or above the form (also any at a path field, which the form leaves out). No message is dropped.
 */
export function placeErrors(sections: Section[], errors: Record<string, string[]>, pathFields: string[] = []): PlacedErrors {
  const placed: PlacedErrors = { fields: {}, sections: {}, general: [] };
  const paths = sections.flatMap((s) => s.fields.map((f) => f.path));
  for (const [key, messages] of Object.entries(errors)) {
    if (atPathField(key, pathFields)) {
      // A path field the form leaves out (a refused path in the YAML or overrides): above the form.
      placed.general.push(...messages.map((m) => `${key}: ${m}`));
      continue;
    }
    const holder = paths.filter((p) => key === p || key.startsWith(`${p}.`)).sort((a, b) => b.length - a.length)[0];
    if (holder !== undefined) {
      const rest = key.slice(holder.length + 1);
      (placed.fields[holder] ??= []).push(...messages.map((m) => (rest ? `${rest}: ${m}` : m)));
      continue;
    }
    const section = sections.find((s) => key === s.name || key.startsWith(`${s.name}.`));
    if (section) {
      const rest = key.slice(section.name.length + 1);
      (placed.sections[section.name] ??= []).push(...messages.map((m) => (rest ? `${rest}: ${m}` : m)));
    } else {
      placed.general.push(...messages.map((m) => (key ? `${key}: ${m}` : m)));
    }
  }
  return placed;
}
