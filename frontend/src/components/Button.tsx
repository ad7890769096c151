import type { AnchorHTMLAttributes, ButtonHTMLAttributes } from "react";
import { Link, type LinkProps } from "react-router";

import styles from "./Button.module.css";

type Variant = "primary" | "secondary";

type ButtonProps = ButtonHTMLAttributes<HTMLButtonElement> & {
  variant?: Variant;
};

function classes(variant: Variant, className?: string): string {
  return [styles.button, styles[variant], className].filter(Boolean).join(" ");
}

export function Button({ variant = "secondary", className, type = "button", ...rest }: ButtonProps) {
  return <button type={type} className={classes(variant, className)} {...rest} />;
}

/** A link (navigation) that looks like a button. */
export function ButtonLink({ variant = "secondary", className, ...rest }: LinkProps & { variant?: Variant }) {
  return <Link className={classes(variant, className)} {...rest} />;
}

/** A plain anchor (downloads, API files) that looks like a button. */
export function ButtonAnchor({ variant = "secondary", className, ...rest }: AnchorHTMLAttributes<HTMLAnchorElement> & { variant?: Variant }) {
  return <a className={classes(variant, className)} {...rest} />;
}
