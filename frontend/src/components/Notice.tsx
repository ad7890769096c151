import type { ReactNode } from "react";

import ui from "./ui.module.css";

export type Tone = "error" | "ok" | "info";

const TONES: Record<Tone, string | undefined> = { error: ui.noticeError, ok: ui.noticeOk, info: ui.noticeInfo };

/** A short message in a tinted box: an error is announced at once (alert), the rest politely (status). */
export function Notice({ tone, children, className, testId }: { tone: Tone; children: ReactNode; className?: string; testId?: string }) {
  return (
    <div className={[ui.notice, TONES[tone], className].filter(Boolean).join(" ")} role={tone === "error" ? "alert" : "status"} data-testid={testId}>
      {children}
    </div>
  );
}
