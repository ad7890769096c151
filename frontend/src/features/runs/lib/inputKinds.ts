/**
 * The run inputs chosen with the generic picker: every field of the run requests whose
 * OpenAPI schema carries `x-input-kind` (studio/references/pickers.py), read from the
 * generated cut of the schema the app ships (`src/api/input-kinds.json`, written by
 * `scripts/gen-api.sh`). A kind that declares a picker on the server is on the form with no
 * code here.
 */
import { z } from "zod";

import generated from "../../../api/input-kinds.json";
import type { ConfigTree } from "./configDiff";
import { getAt } from "./configSchema";

export const EXTENSION = "x-input-kind";
const REQUEST = "RunCreateRequest";

const shownSchema = z.object({
  path: z.string(),
  /** The config's default at `path`, for a form config that leaves it unset. */
  default: z.unknown(),
  in: z.array(z.unknown()).optional(),
  above: z.number().optional(),
});

const pickerSchema = z.object({
  label: z.string(),
  help: z.string(),
  /** The list endpoint the choices come from, asked with `?project=<slug>`. */
  list: z.string(),
  /** The fields an offered item has (the list is fetched once and shared). */
  where: z.record(z.string(), z.string()),
  /** An item's label, `{field}` placeholders. */
  option: z.string(),
  /** The empty option of a new run. */
  unset: z.string(),
  /** Said when no item is offered ("" for nothing). */
  none: z.string(),
  shown: shownSchema.nullable(),
});

/** One picked kind: its request field and what its picker needs. */
export type InputKind = z.infer<typeof pickerSchema> & { field: string };

type OpenApiDocument = { components: { schemas: Record<string, { properties?: Record<string, Record<string, unknown>> }> } };

/** The run request's fields that carry a picker, in the schema's order. */
export function inputKindsOf(document: OpenApiDocument): InputKind[] {
  const properties = document.components.schemas[REQUEST]?.properties ?? {};
  return Object.entries(properties).flatMap(([field, schema]) => {
    if (!(EXTENSION in schema)) return [];
    const parsed = pickerSchema.safeParse(schema[EXTENSION]);
    if (!parsed.success) throw new Error(`${REQUEST}.${field} has a malformed ${EXTENSION}: ${parsed.error.message}`);
    return [{ field, ...parsed.data }];
  });
}

/** The pickers of the schema the app was built with. */
export const INPUT_KINDS: InputKind[] = inputKindsOf(generated);

/** The request fields the generic pickers show, as tsc reads them from the generated cut. */
export type KindField = keyof typeof generated.components.schemas.RunCreateRequest.properties;

/** The chosen ids by request field; null or absent: not chosen (the default, or a clone's parent's). */
export type KindChoices = Record<string, number | null | undefined>;

/** The config makes the kind relevant (always, for a kind with no condition). */
export function kindShown(kind: InputKind, config: ConfigTree): boolean {
  const { shown } = kind;
  if (shown === null) return true;
  const value = getAt(config, shown.path) ?? shown.default;
  if (shown.in !== undefined) return shown.in.includes(value);
  return typeof value === "number" && shown.above !== undefined && value > shown.above;
}

/** The request fields for the shown pickers' choices (none for what is not chosen). */
export function kindInputsRequest(kinds: InputKind[], config: ConfigTree, chosen: KindChoices): Partial<Record<KindField, number>> {
  const request: Record<string, number> = {};
  for (const kind of kinds) {
    const id = chosen[kind.field];
    if (id !== null && id !== undefined && kindShown(kind, config)) request[kind.field] = id;
  }
  return request;
}

/** An item of a list endpoint, as the picker reads it. */
export type ChoiceItem = { id: number } & Record<string, unknown>;

/** The items the kind offers: those with its `where` fields. */
export function offered(kind: InputKind, items: ChoiceItem[]): ChoiceItem[] {
  return items.filter((item) => Object.entries(kind.where).every(([key, value]) => item[key] === value));
}

/** An item's label by the kind's `option` template. */
export function optionLabel(kind: InputKind, item: ChoiceItem): string {
  return kind.option.replace(/\{(\w+)\}/g, (_, key: string) => String(item[key] ?? ""));
}
