import { useEffect, useState } from "react";

import { Field, inputClass } from "../../../components/Field";
import { same, type ConfigTree } from "../lib/configDiff";
import { formatInput, getAt, parseInput, placeErrors, type FieldSpec, type Section } from "../lib/configSchema";
import styles from "./ConfigForm.module.css";

type ConfigFormProps = {
  sections: Section[];
  value: ConfigTree;
  /** The preset's (or parent's) config: fields that differ from it are marked. */
  base: ConfigTree;
  /** Server messages by config path ("actor.optim.lr"; "" for the whole config). */
  errors: Record<string, string[]>;
  onChange: (path: string, value: unknown) => void;
  baseName: string;
  /** The path fields (`pathFieldsOf`) the form leaves out: their errors show above it. */
  pathFields?: string[];
};

/** The run config form, one collapsible section per config group, generated from the schema. */
export function ConfigForm({ sections, value, base, errors, onChange, baseName, pathFields = [] }: ConfigFormProps) {
  const placed = placeErrors(sections, errors, pathFields);
  return (
    <div>
      {placed.general.length ? <ErrorList messages={placed.general} /> : null}
      {sections.map((section) => (
        <ConfigSection
          key={section.name}
          section={section}
          value={value}
          base={base}
          errors={placed.fields}
          sectionErrors={placed.sections[section.name] ?? []}
          onChange={onChange}
          baseName={baseName}
        />
      ))}
    </div>
  );
}

function ErrorList({ messages }: { messages: string[] }) {
  return (
    <ul className={styles.errors} role="alert">
      {messages.map((m) => (
        <li key={m}>{m}</li>
      ))}
    </ul>
  );
}

function ConfigSection({
  section,
  value,
  base,
  errors,
  sectionErrors,
  onChange,
  baseName,
}: Omit<ConfigFormProps, "sections" | "pathFields"> & { section: Section; sectionErrors: string[] }) {
  const errorCount = section.fields.filter((f) => errors[f.path]?.length).length + (sectionErrors.length ? 1 : 0);
  const changedCount = section.fields.filter((f) => !same(getAt(value, f.path), getAt(base, f.path))).length;
  const [open, setOpen] = useState(false);
  const shown = open || errorCount > 0;
  return (
    <details className={styles.section} open={shown} onToggle={(e) => setOpen((e.target as HTMLDetailsElement).open)}>
      <summary>
        {section.title}
        {changedCount ? <span className={styles.count}>{changedCount} changed</span> : null}
        {errorCount ? <span className={styles.errorCount}>{errorCount} to fix</span> : null}
      </summary>
      {sectionErrors.length ? <ErrorList messages={sectionErrors} /> : null}
      {/* A closed section's fields are not rendered: the schema has hundreds, and each
          keystroke re-renders the form (in jsdom, finding a field by its label among them
          all took seconds). Opening it renders them from the values. */}
      {shown ? (
      <div className={styles.fields}>
        {section.fields.map((field) => (
          <ConfigField
            key={field.path}
            field={field}
            value={getAt(value, field.path)}
            baseValue={getAt(base, field.path)}
            errors={errors[field.path] ?? []}
            onChange={onChange}
            baseName={baseName}
          />
        ))}
      </div>
      ) : null}
    </details>
  );
}

type ConfigFieldProps = {
  field: FieldSpec;
  value: unknown;
  baseValue: unknown;
  errors: string[];
  onChange: (path: string, value: unknown) => void;
  baseName: string;
};

function ConfigField({ field, value, baseValue, errors, onChange, baseName }: ConfigFieldProps) {
  const { kind } = field;
  // The text typed is kept as typed ("1e-" on the way to "1e-6"); the value follows it.
  const [text, setText] = useState(() => formatInput(kind, value));
  useEffect(() => {
    if (!same(parseInput(kind, text), value)) setText(formatInput(kind, value));
    // Only an outside change (YAML, overrides, preset) rewrites the text.
  }, [value]); // eslint-disable-line react-hooks/exhaustive-deps
  const changed = !same(value, baseValue);
  const label = (
    <>
      {field.path}
      {changed ? (
        <>
          <span className={styles.changed} title={`${baseName}: ${formatInput(kind, baseValue) || "empty"}`}>
            changed
          </span>
          <button type="button" className={styles.reset} onClick={() => onChange(field.path, baseValue)} aria-label={`Reset ${field.path}`}>
            reset
          </button>
        </>
      ) : null}
    </>
  );
  const update = (next: string) => {
    setText(next);
    onChange(field.path, parseInput(kind, next));
  };
  return (
    <Field label={label} help={field.description} errors={errors}>
      {(props) => {
        if (kind.type === "boolean") {
          return <input {...props} type="checkbox" checked={value === true} onChange={(e) => onChange(field.path, e.target.checked)} data-path={field.path} />;
        }
        if (kind.type === "enum") {
          return (
            <select {...props} className={inputClass} value={text} onChange={(e) => update(e.target.value)} data-path={field.path}>
              {kind.nullable ? <option value="">(none)</option> : null}
              {kind.options.map((o) => (
                <option key={String(o)} value={String(o)}>
                  {String(o)}
                </option>
              ))}
            </select>
          );
        }
        if (kind.type === "list") {
          return <textarea {...props} className={inputClass} rows={2} value={text} onChange={(e) => update(e.target.value)} placeholder="one per line" data-path={field.path} />;
        }
        if (kind.type === "json") {
          // A list of sections (reward.extra_models): JSON, which the server validates field by field.
          return <textarea {...props} className={inputClass} rows={3} spellCheck={false} value={text} onChange={(e) => update(e.target.value)} placeholder="JSON" data-path={field.path} />;
        }
        return (
          <input
            {...props}
            className={inputClass}
            inputMode={kind.type === "number" ? (kind.integer ? "numeric" : "decimal") : undefined}
            placeholder={"nullable" in kind && kind.nullable ? "empty: not set" : kind.type === "tuple" ? "comma-separated" : undefined}
            value={text}
            onChange={(e) => update(e.target.value)}
            data-path={field.path}
          />
        );
      }}
    </Field>
  );
}
