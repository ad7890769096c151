import { describe, expect, it } from "vitest";

import schema from "../fixtures/config-schema.json";
import { atPathField, isPathField, pathFieldsOf, placeErrors, sectionsOf } from "./configSchema";

const real = schema as Record<string, unknown>;

describe("path fields (files, folders, URLs) of the config", () => {
  it("are read from the schema's markers: the field, its items or a member of its anyOf", () => {
    expect(isPathField({ type: "string", format: "server-path" })).toBe(true);
    expect(isPathField({ type: "array", items: { type: "string", format: "path-or-url" } })).toBe(true);
    expect(isPathField({ anyOf: [{ type: "string", "x-studio-resource": "reward" }, { type: "null" }] })).toBe(true);
    expect(isPathField({ anyOf: [{ type: "array", items: { type: "string", format: "server-path" } }, { type: "null" }] })).toBe(true);
    expect(isPathField({ type: "string", format: "date-time" })).toBe(false);
    expect(isPathField({ type: "array", items: { type: "string" } })).toBe(false);
  });

  it("are every marked field of the real schema, lists of sections stepped into", () => {
    expect(pathFieldsOf(real).sort()).toEqual(
      [
        "actor.lora.adapter_path",
        "checkpoint.dir",
        "critic.model.path",
        "data.train_files",
        "data.val_files",
        "evaluation.models.*.path",
        "logging.jsonl_path",
        "logging.spool_dir",
        "model.path",
        "reward.custom_path",
        "reward.extra_models.*.path",
        "reward.model.path",
      ].sort(),
    );
  });

  it("are left out of the generated form", () => {
    const fields = sectionsOf(real).flatMap((s) => s.fields.map((f) => f.path));
    for (const path of pathFieldsOf(real).filter((p) => !p.includes("*"))) expect(fields, path).not.toContain(path);
    // The rest of their groups stays.
    expect(fields).toContain("model.dtype");
    expect(fields).toContain("data.max_prompt_length");
    expect(fields).toContain("reward.extra_models");
  });

  it("match error keys at them, items and list indexes included", () => {
    const paths = pathFieldsOf(real);
    expect(atPathField("model.path", paths)).toBe(true);
    expect(atPathField("data.train_files.0", paths)).toBe(true);
    expect(atPathField("reward.extra_models.2.path", paths)).toBe(true);
    expect(atPathField("reward.extra_models.2.weight", paths)).toBe(false);
    expect(atPathField("model.dtype", paths)).toBe(false);
    expect(atPathField("model.pathology", paths)).toBe(false);
  });

  it("have their server errors (refused paths) placed above the form", () => {
    const placed = placeErrors(sectionsOf(real), { "model.path": ["Names a file or folder on the server"], "rollout.n": ["too small"] }, pathFieldsOf(real));
    expect(placed.general).toEqual(["model.path: Names a file or folder on the server"]);
    expect(placed.fields).toEqual({ "rollout.n": ["too small"] });
  });
});
