/**
 * A sweep's search space: the parameters a config field or a run input can be searched
 * over, the range each starts with, and the number of trials a grid over them makes.
 */
import type { FieldSpec } from "../../runs/lib/configSchema";
import type { InputField, Param } from "./types";

/** The run inputs a space may search over, with the words the form shows for each. */
export const INPUT_FIELDS: { field: InputField; label: string }[] = [
  { field: "dataset_version", label: "Training data version" },
  { field: "reward_version", label: "Reward version" },
  { field: "validation_version", label: "Validation data version" },
  { field: "model", label: "Model" },
  { field: "critic_model", label: "Critic model" },
  { field: "lora_adapter", label: "LoRA adapter" },
];

export function isInputField(name: string): name is InputField {
  return INPUT_FIELDS.some((input) => input.field === name);
}

/** The config fields a sweep can search: numbers, booleans and fields with a closed set of values. */
export function searchable(field: FieldSpec): boolean {
  return field.kind.type === "number" || field.kind.type === "boolean" || field.kind.type === "enum";
}

function clamp(value: number, min: number | undefined, max: number | undefined): number {
  return Math.min(max ?? Infinity, Math.max(min ?? -Infinity, value));
}

/** Rounds a range end to 2 significant digits (1e-5 stays 1e-5, 0.30000000000000004 becomes 0.3). */
function tidy(value: number): number {
  return value === 0 ? 0 : Number(value.toPrecision(2));
}

/**
 * The range a field starts with, around its value in the base config: a positive float
 * spans a tenth to ten times it on a log scale (learning rates, coefficients); a float at 0
 * spans up to its maximum or 1; an integer spans half to twice it. Schema bounds hold.
 * A boolean starts with both values, an enum with the base's and the next one.
 */
export function defaultParam(field: FieldSpec, current: unknown): Param {
  const { path: name, kind } = field;
  if (kind.type === "boolean") return { name, type: "choice", values: [true, false] };
  if (kind.type === "enum") {
    // The base's value and the next option: a search over every value of a long enum is rarely meant.
    const at = Math.max(0, kind.options.findIndex((o) => o === current));
    const values = [kind.options[at], kind.options[(at + 1) % kind.options.length]].filter((v): v is string | number => v !== undefined);
    return { name, type: "choice", values: [...new Set(values)] };
  }
  if (kind.type !== "number") throw new Error(`${name} is not a searchable field (a ${kind.type}).`);
  const value = typeof current === "number" && Number.isFinite(current) ? current : null;
  if (kind.integer) {
    const base = value !== null && value > 0 ? value : Math.max(1, kind.min ?? 1);
    const low = clamp(Math.max(1, Math.floor(base / 2)), kind.min, kind.max);
    const high = clamp(Math.max(low + 1, base * 2), kind.min, kind.max);
    return { name, type: "int", low, high, step: 1 };
  }
  if (value !== null && value > 0) {
    const low = clamp(tidy(value / 10), kind.min, kind.max);
    const high = clamp(tidy(value * 10), kind.min, kind.max);
    return { name, type: "float", low, high, log: low > 0 };
  }
  const low = kind.min ?? 0;
  return { name, type: "float", low, high: kind.max ?? Math.max(low + 1, 1), log: false };
}

/** The start of an input parameter: none of its items chosen yet. */
export function inputParam(field: InputField): Param {
  return { name: field, type: "input", values: [] };
}

/** How many values a parameter takes in a grid; null for a float range (no grid of it). */
export function gridPoints(param: Param): number | null {
  switch (param.type) {
    case "float":
      return null;
    case "int": {
      if (!(param.step > 0) || param.high < param.low) return 0;
      return Math.floor((param.high - param.low) / param.step + 1e-9) + 1;
    }
    case "choice":
    case "input":
      return param.values.length;
  }
}

export type GridSize = { trials: number } | { floats: string[] };

/** The trials a grid over the space makes (the product of its parameters' values), or the float ranges that forbid a grid. */
export function gridSize(space: Param[]): GridSize {
  const floats = space.filter((p) => p.type === "float").map((p) => p.name);
  if (floats.length) return { floats };
  return { trials: space.reduce((product, param) => product * (gridPoints(param) ?? 0), space.length ? 1 : 0) };
}

/** Why a grid cannot run over these float ranges, naming what fixes it. */
export function floatGridMessage(floats: string[]): string {
  const names = floats.join(", ");
  return `A grid needs a finite set of values: ${names} ${floats.length === 1 ? "is a float range" : "are float ranges"}. Make ${floats.length === 1 ? "it" : "them"} a choice of values, or use random or TPE.`;
}

/** A range end as typed and read: 1e-5 rather than 0.00001; other numbers as they are. */
export function compactNumber(value: number): string {
  return value !== 0 && Math.abs(value) < 1e-3 ? value.toExponential() : String(value);
}

/** One parameter's range in words: "1e-5 to 0.001, log", "2 to 8 by 2", "0.7, 1". */
export function describeParam(param: Param): string {
  switch (param.type) {
    case "float":
      return `${compactNumber(param.low)} to ${compactNumber(param.high)}${param.log ? ", log" : ""}`;
    case "int":
      return `${param.low} to ${param.high}${param.step !== 1 ? ` by ${param.step}` : ""}`;
    case "choice":
    case "input":
      return param.values.map(String).join(", ");
  }
}
