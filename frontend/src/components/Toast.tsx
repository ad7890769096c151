import { createContext, useCallback, useContext, useMemo, useState, type ReactNode } from "react";

import { errorMessage } from "../api/errors";
import styles from "./ui.module.css";

type Tone = "info" | "success" | "error";
type ToastItem = { id: number; tone: Tone; message: string };
type ToastApi = { show: (message: string, tone?: Tone) => void; error: (error: unknown) => void };

const ToastContext = createContext<ToastApi | null>(null);
const TOAST_MS = 6_000;
let nextId = 1;

/** Holds the toasts of the whole app; errors stay until dismissed, the rest fade after 6 s. */
export function ToastProvider({ children }: { children: ReactNode }) {
  const [items, setItems] = useState<ToastItem[]>([]);
  const dismiss = useCallback((id: number) => setItems((all) => all.filter((t) => t.id !== id)), []);
  const show = useCallback(
    (message: string, tone: Tone = "info") => {
      const id = nextId++;
      setItems((all) => [...all.slice(-4), { id, tone, message }]);
      if (tone !== "error") setTimeout(() => dismiss(id), TOAST_MS);
    },
    [dismiss],
  );
  const api = useMemo<ToastApi>(() => ({ show, error: (e) => show(errorMessage(e), "error") }), [show]);
  return (
    <ToastContext.Provider value={api}>
      {children}
      <div className={styles.toasts} aria-live="polite">
        {items.map((item) => (
          <div key={item.id} role={item.tone === "error" ? "alert" : "status"} className={`${styles.toast} ${styles[item.tone] ?? ""}`}>
            <span>{item.message}</span>
            <button type="button" className={styles.toastClose} aria-label="Dismiss" onClick={() => dismiss(item.id)}>
              ×
            </button>
          </div>
        ))}
      </div>
    </ToastContext.Provider>
  );
}

export function useToast(): ToastApi {
  const api = useContext(ToastContext);
  if (!api) throw new Error("useToast needs a <ToastProvider> above it");
  return api;
}
