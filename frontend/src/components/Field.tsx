import { useId, type InputHTMLAttributes, type ReactNode, type SelectHTMLAttributes } from "react";

import { FieldErrors } from "../api/errors";
import styles from "./ui.module.css";

/** The messages the server gave for `path`, or none (for any other error). */
export function fieldErrorsAt(error: unknown, path: string): string[] {
  return error instanceof FieldErrors ? error.at(path) : [];
}

type FieldProps = {
  label: ReactNode;
  help?: ReactNode;
  errors?: string[];
  /** Renders the control, wired to the label, help and error by id. */
  children: (props: { id: string; "aria-describedby": string; "aria-invalid": boolean }) => ReactNode;
  className?: string;
};

/** A labelled form control with its help text and the server's errors below it. */
export function Field({ label, help, errors = [], children, className }: FieldProps) {
  const id = useId();
  const describedBy = `${id}-help ${id}-error`;
  return (
    <div className={className ? `${styles.field} ${className}` : styles.field}>
      <label className={styles.label} htmlFor={id}>
        {label}
      </label>
      {children({ id, "aria-describedby": describedBy, "aria-invalid": errors.length > 0 })}
      {help ? (
        <span id={`${id}-help`} className={styles.help}>
          {help}
        </span>
      ) : null}
      {errors.length ? (
        <span id={`${id}-error`} className={styles.fieldError} role="alert">
          {errors.join(" ")}
        </span>
      ) : null}
    </div>
  );
}

export const inputClass = styles.input;

type Described = { label: ReactNode; help?: ReactNode; errors?: string[]; className?: string };

/** A labelled text input (any input type) with its help and the server's errors at the field. */
export function TextField({ label, help, errors, className, onChange, ...input }: Described & Omit<InputHTMLAttributes<HTMLInputElement>, "onChange" | "id"> & { onChange: (value: string) => void }) {
  return (
    <Field label={label} help={help} errors={errors} className={className}>
      {(props) => <input {...input} {...props} className={inputClass} onChange={(e) => onChange(e.target.value)} />}
    </Field>
  );
}

/** A labelled select (its options as children) with its help and the server's errors at the field. */
export function SelectField({ label, help, errors, className, onChange, children, ...select }: Described & Omit<SelectHTMLAttributes<HTMLSelectElement>, "onChange" | "id"> & { onChange: (value: string) => void }) {
  return (
    <Field label={label} help={help} errors={errors} className={className}>
      {(props) => (
        <select {...select} {...props} className={inputClass} onChange={(e) => onChange(e.target.value)}>
          {children}
        </select>
      )}
    </Field>
  );
}
