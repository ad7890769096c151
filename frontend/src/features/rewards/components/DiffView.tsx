/** Two versions side by side (@codemirror/merge), read-only. Loaded on demand. */
import { python } from "@codemirror/lang-python";
import { MergeView } from "@codemirror/merge";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { useEffect, useRef } from "react";

import styles from "./CodeEditor.module.css";

export type DiffViewProps = { before: string; after: string };

export default function DiffView({ before, after }: DiffViewProps) {
  const host = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!host.current) return undefined;
    const readOnly = [basicSetup, python(), EditorState.readOnly.of(true), EditorView.editable.of(false)];
    const merge = new MergeView({
      parent: host.current,
      a: { doc: before, extensions: readOnly },
      b: { doc: after, extensions: readOnly },
      collapseUnchanged: { margin: 3, minSize: 6 },
    });
    return () => merge.destroy();
  }, [before, after]);
  return <div ref={host} className={styles.diff} data-testid="reward-diff" />;
}
