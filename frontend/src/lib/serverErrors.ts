/**
 * The server's field errors, placed by the form library: each dotted path the API names
 * (`FieldErrors.fields`) becomes an error on the form field that shows it, through
 * react-hook-form's `setError`, so a field shows the server's message and the user's
 * schema errors the same way, and editing the field clears it.
 *
 * Only types come from react-hook-form here: this module is imported by eagerly loaded
 * code paths, and the library itself stays in the lazily loaded form pages' chunks.
 */
import type { FieldPath, FieldValues, UseFormSetError } from "react-hook-form";

import { FieldErrors } from "../api/errors";

/** Where the messages for a server path go: a form field, or null for "not a field of this form". */
export type FieldOf<T extends FieldValues> = (path: string) => FieldPath<T> | null;

/**
 * Sets each server message on its field (several paths at one field join) and returns the
 * messages no field took, by path: the caller shows those elsewhere (a config form, a toast).
 */
export function placeFieldErrors<T extends FieldValues>(fields: Record<string, string[]>, setError: UseFormSetError<T>, fieldOf: FieldOf<T>): Record<string, string[]> {
  const placed = new Map<FieldPath<T>, string[]>();
  const rest: Record<string, string[]> = {};
  for (const [path, messages] of Object.entries(fields)) {
    const field = fieldOf(path);
    if (field === null) rest[path] = messages;
    else placed.set(field, [...(placed.get(field) ?? []), ...messages]);
  }
  for (const [field, messages] of placed) setError(field, { type: "server", message: messages.join(" ") });
  return rest;
}

/**
 * A failed request's field errors placed on the form (see `placeFieldErrors`). Returns the
 * messages no field took; an error that names no fields comes back whole under "".
 */
export function placeServerErrors<T extends FieldValues>(error: unknown, setError: UseFormSetError<T>, fieldOf: FieldOf<T>): Record<string, string[]> {
  if (!(error instanceof FieldErrors)) return { "": [error instanceof Error ? error.message : String(error)] };
  return placeFieldErrors(error.fields, setError, fieldOf);
}

type ErrorTree = { message?: unknown } | Record<string, unknown> | undefined;

/** The message at a field of a form's error tree (`formState.errors`), as the `errors` list `Field` takes. */
export function messagesAt(errors: unknown, path: string): string[] {
  let node = errors as ErrorTree;
  for (const key of path.split(".")) {
    if (typeof node !== "object" || node === null) return [];
    node = (node as Record<string, ErrorTree>)[key];
  }
  const message = typeof node === "object" && node !== null && "message" in node ? node.message : undefined;
  return typeof message === "string" && message ? [message] : [];
}
