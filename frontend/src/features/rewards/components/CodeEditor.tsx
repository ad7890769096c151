/**
 * CodeMirror 6 with Python highlighting, bracket matching, search (Ctrl/Cmd-F) and
 * problem markers. Loaded on demand (React.lazy in `LazyEditors.tsx`): none of
 * CodeMirror is in the initial bundle.
 */
import { python } from "@codemirror/lang-python";
import { lintGutter, setDiagnostics, type Diagnostic } from "@codemirror/lint";
import { EditorState } from "@codemirror/state";
import { EditorView } from "@codemirror/view";
import { basicSetup } from "codemirror";
import { useEffect, useRef } from "react";

import type { Marker } from "../lib/markers";
import styles from "./CodeEditor.module.css";

export type CodeEditorProps = {
  value: string;
  onChange: (code: string) => void;
  markers: readonly Marker[];
  label: string;
};

const theme = EditorView.theme({
  "&": { height: "100%", fontSize: "13.5px" },
  ".cm-scroller": { fontFamily: "var(--font-mono)", lineHeight: "1.55" },
  "&.cm-focused": { outline: "none" },
});

export default function CodeEditor({ value, onChange, markers, label }: CodeEditorProps) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView | null>(null);
  const latestOnChange = useRef(onChange);
  latestOnChange.current = onChange;

  useEffect(() => {
    if (!host.current) return undefined;
    const created = new EditorView({
      parent: host.current,
      state: EditorState.create({
        doc: value,
        extensions: [
          basicSetup,
          python(),
          lintGutter(),
          theme,
          EditorView.contentAttributes.of({ "aria-label": label }),
          EditorView.updateListener.of((update) => {
            if (update.docChanged) latestOnChange.current(update.state.doc.toString());
          }),
        ],
      }),
    });
    view.current = created;
    return () => {
      created.destroy();
      view.current = null;
    };
    // The view is created once; later values arrive through the effect below.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const current = view.current;
    if (!current) return;
    const text = current.state.doc.toString();
    if (text !== value) {
      current.dispatch({ changes: { from: 0, to: text.length, insert: value } });
    }
  }, [value]);

  useEffect(() => {
    const current = view.current;
    if (!current) return;
    const length = current.state.doc.length;
    const diagnostics: Diagnostic[] = markers.map((m) => ({
      from: Math.min(m.from, length),
      to: Math.min(m.to, length),
      severity: m.severity,
      message: m.message,
    }));
    current.dispatch(setDiagnostics(current.state, diagnostics));
  }, [markers, value]);

  return <div ref={host} className={styles.editor} data-testid="reward-code-editor" />;
}
