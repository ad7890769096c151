import { Controller, useFieldArray, useWatch, type UseFormReturn } from "react-hook-form";

import { Button } from "../../../components/Button";
import { SelectField, TextField } from "../../../components/Field";
import ui from "../../../components/ui.module.css";
import { messagesAt } from "../../../lib/serverErrors";
import type { ConfigTree } from "../../runs/lib/configDiff";
import { getAt, type FieldSpec, type Section } from "../../runs/lib/configSchema";
import styles from "../sweeps.module.css";
import { defaultParam, gridPoints, INPUT_FIELDS, inputParam, isInputField, searchable } from "../lib/space";
import { splitValues, toParam, toRow, type ParamRow, type SweepFormValues, type ValidSweepForm } from "../lib/sweepForm";
import { InputChoices } from "./InputChoices";

type Form = UseFormReturn<SweepFormValues, unknown, ValidSweepForm>;
type Props = { form: Form; sections: Section[]; fields: Map<string, FieldSpec>; baseConfig: ConfigTree; slug: string };

const TYPE_LABELS: Record<ParamRow["type"], string> = { float: "float range", int: "integer range", choice: "choice of values", input: "input choice" };

/** The parameters to search: add config fields or run inputs, each with its range or values. */
export function SpaceEditor({ form, sections, fields, baseConfig, slug }: Props) {
  const { control } = form;
  const space = useFieldArray({ control, name: "space" });
  const rows = useWatch({ control, name: "space" });
  const method = useWatch({ control, name: "method" });
  const taken = new Set(rows.map((r) => r.name));
  const add = (name: string) => {
    if (!name || taken.has(name)) return;
    const field = fields.get(name);
    if (isInputField(name)) space.append(toRow(inputParam(name)));
    else if (field) space.append(toRow(defaultParam(field, getAt(baseConfig, name))));
    form.clearErrors("space");
  };
  const spaceErrors = messagesAt(form.formState.errors, "space");
  return (
    <div>
      {space.fields.map((item, index) => {
        const row = rows[index];
        if (!row) return null;
        return <ParamEditor key={item.id} form={form} index={index} row={row} field={fields.get(row.name)} current={getAt(baseConfig, row.name)} slug={slug} grid={method === "grid"} onRemove={() => space.remove(index)} />;
      })}
      {rows.length === 0 ? <p className={ui.muted}>No parameter yet: add the config fields or inputs to search over.</p> : null}
      <SelectField label="Add a parameter" help="A config field (its range starts around the base's value) or a run input (choose its items)." errors={spaceErrors} value="" onChange={add}>
        <option value="">Choose a field or an input…</option>
        <optgroup label="Run inputs">
          {INPUT_FIELDS.map((input) => (
            <option key={input.field} value={input.field} disabled={taken.has(input.field)}>
              {input.label} ({input.field})
            </option>
          ))}
        </optgroup>
        {sections.map((section) => {
          const options = section.fields.filter(searchable);
          return options.length ? (
            <optgroup key={section.name} label={section.title}>
              {options.map((f) => (
                <option key={f.path} value={f.path} disabled={taken.has(f.path)}>
                  {f.path}
                </option>
              ))}
            </optgroup>
          ) : null;
        })}
      </SelectField>
    </div>
  );
}

type ParamEditorProps = { form: Form; index: number; row: ParamRow; field: FieldSpec | undefined; current: unknown; slug: string; grid: boolean; onRemove: () => void };

/** The types a parameter can take: a float field a range or values, an integer field a range or values, the rest values. */
function typesFor(row: ParamRow, field: FieldSpec | undefined): ParamRow["type"][] {
  if (row.type === "input") return ["input"];
  if (field?.kind.type !== "number") return ["choice"];
  return field.kind.integer ? ["int", "choice"] : ["float", "int", "choice"];
}

function ParamEditor({ form, index, row, field, current, slug, grid, onRemove }: ParamEditorProps) {
  const { control, setValue } = form;
  const at = (name: keyof ParamRow) => messagesAt(form.formState.errors, `space.${index}.${name}`);
  const prefix = `space.${index}` as const;
  const types = typesFor(row, field);
  const points = grid ? gridPoints(toParam(row)) : null;
  const inputLabel = INPUT_FIELDS.find((i) => i.field === row.name)?.label;
  const switchType = (type: ParamRow["type"]) => {
    if (type === row.type) return;
    if (type === "choice") setValue(prefix, { ...row, type, values: [row.low, row.high].filter(Boolean).join(", ") });
    else if (field?.kind.type === "number") setValue(prefix, toRow(defaultParam({ ...field, kind: { ...field.kind, integer: type === "int" } }, current)));
  };
  return (
    <fieldset className={styles.card} style={{ padding: 12, marginBottom: 10 }} aria-label={`Parameter ${row.name}`} data-testid="space-row">
      <legend className={ui.mono} style={{ fontWeight: 600, padding: "0 4px" }}>
        {row.name}
      </legend>
      <div className={styles.paramHead}>
        <p className={ui.muted}>
          {inputLabel ?? field?.description ?? ""}
          {grid ? <> · {points === null ? <strong>not a grid: a float range</strong> : `${points} value${points === 1 ? "" : "s"} in the grid`}</> : null}
        </p>
        <Button onClick={onRemove} aria-label={`Remove ${row.name}`}>
          Remove
        </Button>
      </div>
      <div className={ui.row} style={{ alignItems: "flex-start" }}>
        {types.length > 1 ? (
          <SelectField label="Search" value={row.type} onChange={(v) => switchType(v as ParamRow["type"])} errors={at("type")}>
            {types.map((t) => (
              <option key={t} value={t}>
                {TYPE_LABELS[t]}
              </option>
            ))}
          </SelectField>
        ) : null}
        {row.type === "float" || row.type === "int" ? (
          <>
            <Controller control={control} name={`${prefix}.low`} render={({ field: f }) => <TextField label="Low" errors={at("low")} inputMode="decimal" className={styles.bound} {...f} />} />
            <Controller control={control} name={`${prefix}.high`} render={({ field: f }) => <TextField label="High" errors={at("high")} inputMode="decimal" className={styles.bound} {...f} />} />
          </>
        ) : null}
        {row.type === "float" ? (
          <Controller
            control={control}
            name={`${prefix}.log`}
            render={({ field: f }) => (
              <label className={ui.field} style={{ alignSelf: "end", display: "flex", gap: 6, alignItems: "center" }}>
                <input type="checkbox" checked={f.value} onChange={(e) => f.onChange(e.target.checked)} />
                log scale
              </label>
            )}
          />
        ) : null}
        {row.type === "int" ? <Controller control={control} name={`${prefix}.step`} render={({ field: f }) => <TextField label="Step" errors={at("step")} inputMode="numeric" className={styles.small} {...f} />} /> : null}
        {row.type === "choice" ? <ChoiceValues form={form} index={index} row={row} field={field} errors={at("values")} /> : null}
      </div>
      {row.type === "input" && isInputField(row.name) ? (
        <Controller control={control} name={`${prefix}.items`} render={({ field: f }) => <InputChoices slug={slug} field={row.name as Parameters<typeof InputChoices>[0]["field"]} value={f.value} onChange={f.onChange} errors={at("items")} />} />
      ) : null}
    </fieldset>
  );
}

/** A field with a closed set of values (an enum, a boolean): ticked; any other: typed, comma-separated. */
function ChoiceValues({ form, index, row, field, errors }: { form: Form; index: number; row: ParamRow; field: FieldSpec | undefined; errors: string[] }) {
  const name = `space.${index}.values` as const;
  const options = field?.kind.type === "enum" ? field.kind.options : field?.kind.type === "boolean" ? [true, false] : null;
  if (options) {
    const chosen = splitValues(row.values).map(String);
    const toggle = (option: string) => {
      const next = chosen.includes(option) ? chosen.filter((c) => c !== option) : [...chosen, option];
      form.setValue(name, options.map(String).filter((o) => next.includes(o)).join(", "), { shouldValidate: form.formState.isSubmitted });
    };
    return (
      <fieldset style={{ border: "none", padding: 0, margin: 0 }} aria-invalid={errors.length > 0}>
        <legend className={ui.label}>Values</legend>
        <div className={ui.row}>
          {options.map((option) => (
            <label key={String(option)} style={{ display: "flex", gap: 4, alignItems: "center", fontSize: "0.85rem" }}>
              <input type="checkbox" checked={chosen.includes(String(option))} onChange={() => toggle(String(option))} />
              {String(option)}
            </label>
          ))}
        </div>
        {errors.length ? (
          <span className={ui.fieldError} role="alert">
            {errors.join(" ")}
          </span>
        ) : null}
      </fieldset>
    );
  }
  return <Controller control={form.control} name={name} render={({ field: f }) => <TextField label="Values" help="Comma-separated, e.g. 0.7, 1.0" errors={errors} {...f} />} />;
}
