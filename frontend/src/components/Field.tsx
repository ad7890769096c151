import { useId, type ReactNode } from "react";

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
};

/** A labelled form control with its help text and the server's errors below it. */
export function Field({ label, help, errors = [], children }: FieldProps) {
  const id = useId();
  const describedBy = `${id}-help ${id}-error`;
  return (
    <div className={styles.field}>
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
