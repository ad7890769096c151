import { describe, expect, it, vi } from "vitest";

import { ApiError, FieldErrors } from "../api/errors";
import { messagesAt, placeFieldErrors, placeServerErrors } from "./serverErrors";

type Values = { name: string; dataset: number | null; resources: { cpus: string } };
const fieldOf = (path: string) => (path === "name" || path === "resources.cpus" ? path : path.startsWith("dataset") ? "dataset" : null);

describe("server errors on a form", () => {
  it("are set on the field that shows each path, joined where two paths share a field", () => {
    const setError = vi.fn();
    const rest = placeFieldErrors<Values>({ name: ["Taken."], dataset: ["Missing."], dataset_version: ["Not yours."], "config.a": ["Bad."] }, setError, fieldOf);
    expect(setError).toHaveBeenCalledWith("name", { type: "server", message: "Taken." });
    expect(setError).toHaveBeenCalledWith("dataset", { type: "server", message: "Missing. Not yours." });
    expect(rest).toEqual({ "config.a": ["Bad."] });
  });

  it("come back whole when the error names no fields", () => {
    const setError = vi.fn();
    expect(placeServerErrors<Values>(new ApiError("Down.", 503), setError, fieldOf)).toEqual({ "": ["Down."] });
    expect(placeServerErrors<Values>(new FieldErrors("Invalid.", 400, { "resources.cpus": ["Too many."] }), setError, fieldOf)).toEqual({});
    expect(setError).toHaveBeenCalledWith("resources.cpus", { type: "server", message: "Too many." });
  });

  it("are read back by dotted path for the field's error list", () => {
    const errors = { name: { type: "server", message: "Taken." }, resources: { cpus: { message: "Too many." } } };
    expect(messagesAt(errors, "name")).toEqual(["Taken."]);
    expect(messagesAt(errors, "resources.cpus")).toEqual(["Too many."]);
    expect(messagesAt(errors, "resources.gpus")).toEqual([]);
    expect(messagesAt(errors, "tags.0")).toEqual([]);
  });
});
