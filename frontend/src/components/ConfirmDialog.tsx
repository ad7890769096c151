import { useEffect, useId, useRef, type KeyboardEvent, type ReactNode } from "react";

import { Button } from "./Button";
import styles from "./ConfirmDialog.module.css";

type ConfirmDialogProps = {
  open: boolean;
  title: string;
  children?: ReactNode;
  confirmLabel: string;
  cancelLabel?: string;
  /** A destructive action: the confirm button is drawn in the error colour. */
  danger?: boolean;
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
};

/**
 * A modal question before an action that cannot be undone. The confirm button has the
 * focus, so Enter confirms; Escape (or a click outside) cancels; Tab stays inside; the
 * focus goes back where it was when the dialog closes.
 */
export function ConfirmDialog({ open, title, children, confirmLabel, cancelLabel = "Keep it", danger = false, busy = false, onConfirm, onCancel }: ConfirmDialogProps) {
  const titleId = useId();
  const bodyId = useId();
  const dialog = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (!open) return undefined;
    const before = document.activeElement instanceof HTMLElement ? document.activeElement : null;
    dialog.current?.querySelector<HTMLButtonElement>("[data-confirm]")?.focus();
    return () => before?.focus();
  }, [open]);

  if (!open) return null;

  const onKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (event.key === "Escape") {
      event.preventDefault();
      onCancel();
    } else if (event.key === "Enter") {
      // Enter answers with the focused button (the confirm button unless Tab moved it);
      // the default is prevented so the browser does not click it a second time.
      event.preventDefault();
      if ((document.activeElement as HTMLElement | null)?.dataset.cancel !== undefined) onCancel();
      else if (!busy) onConfirm();
    } else if (event.key === "Tab") {
      // Keep the focus on the dialog's two buttons.
      const buttons = [...(dialog.current?.querySelectorAll("button") ?? [])];
      const at = buttons.indexOf(document.activeElement as HTMLButtonElement);
      const next = buttons[(at + (event.shiftKey ? -1 : 1) + buttons.length) % buttons.length];
      event.preventDefault();
      next?.focus();
    }
  };

  return (
    <div className={styles.backdrop} onMouseDown={(e) => e.target === e.currentTarget && onCancel()}>
      <div ref={dialog} className={styles.dialog} role="alertdialog" aria-modal="true" aria-labelledby={titleId} aria-describedby={children ? bodyId : undefined} onKeyDown={onKeyDown}>
        <h2 id={titleId} className={styles.title}>
          {title}
        </h2>
        {children ? (
          <div id={bodyId} className={styles.body}>
            {children}
          </div>
        ) : null}
        <div className={styles.actions}>
          <Button data-cancel onClick={onCancel}>
            {cancelLabel}
          </Button>
          <Button data-confirm variant="primary" className={danger ? styles.danger : undefined} onClick={onConfirm} disabled={busy}>
            {confirmLabel}
          </Button>
        </div>
      </div>
    </div>
  );
}
