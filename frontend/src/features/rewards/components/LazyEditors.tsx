/** The editor and the diff view, each its own chunk, fetched when first shown. */
import { lazy, Suspense } from "react";

import type { CodeEditorProps } from "./CodeEditor";
import type { DiffViewProps } from "./DiffView";
import styles from "./LazyEditors.module.css";

const CodeEditorChunk = lazy(() => import("./CodeEditor"));
const DiffViewChunk = lazy(() => import("./DiffView"));

function Loading({ what }: { what: string }) {
  return (
    <div className={styles.loading} role="status">
      Loading the {what}…
    </div>
  );
}

export function LazyCodeEditor(props: CodeEditorProps) {
  return (
    <Suspense fallback={<Loading what="editor" />}>
      <CodeEditorChunk {...props} />
    </Suspense>
  );
}

export function LazyDiffView(props: DiffViewProps) {
  return (
    <Suspense fallback={<Loading what="diff" />}>
      <DiffViewChunk {...props} />
    </Suspense>
  );
}
