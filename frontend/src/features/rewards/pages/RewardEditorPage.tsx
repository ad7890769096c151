/**
 * One reward function: the editor (with its draft, problems and save), the test
 * panel beside it, versions with their diff, the A/B view, and "Train on this".
 */
import { useEffect, useMemo, useReducer, useState } from "react";
import { Link, useParams } from "react-router";

import { Button } from "../../../components/Button";
import { ErrorState } from "../../../components/ErrorState";
import { Columns, Page } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { PageHeader } from "../../../components/PageHeader";
import type { RewardCheck, RewardVersion } from "../api";
import { ComparePanel } from "../components/ComparePanel";
import { LazyCodeEditor } from "../components/LazyEditors";
import { TestPanel } from "../components/TestPanel";
import { VersionsPanel } from "../components/VersionsPanel";
import { useCodeCheck, useRewardFunction, useRewardVersion, useRewardVersions, useSaveRewardVersion, useTestRun } from "../hooks";
import { clearDraft, EMPTY_FUNCTION, hasUnsavedChanges, loadDraft, saveDraft } from "../lib/drafts";
import { editorReducer, initialEditorState, restoredDraft } from "../lib/editorState";
import { problemsToMarkers } from "../lib/markers";
import { useDraftKeeper } from "../lib/useDraftKeeper";
import styles from "./RewardEditorPage.module.css";

export function RewardEditorPage() {
  const params = useParams();
  const slug = params.slug ?? "";
  const functionId = Number(params.functionId);

  const fn = useRewardFunction(functionId);
  const versions = useRewardVersions(functionId);
  const latest = versions.data?.[0] ?? null;
  const [openNumber, setOpenNumber] = useState<number | null>(null);
  const shownNumber = openNumber ?? latest?.number ?? null;
  const shown = useRewardVersion(functionId, shownNumber);

  const [editor, dispatch] = useReducer(editorReducer, initialEditorState);
  const { code, notice, problems, message, saveError } = editor;
  const saved: RewardVersion | null = shown.data ?? null;
  // The editor's text opens once per version shown, when it has loaded.
  useEffect(() => {
    if (versions.isPending || (shownNumber !== null && !shown.data)) return;
    const version = shown.data ? { code: shown.data.code, number: shown.data.number } : null;
    dispatch({ type: "open", key: `${functionId}:${shownNumber ?? "none"}`, saved: version, draft: openNumber === null ? loadDraft(functionId) : null, chosen: openNumber !== null });
  }, [functionId, openNumber, shownNumber, shown.data, versions.isPending]);

  const savedCode = saved?.code ?? EMPTY_FUNCTION; // no version yet: the stub it opened with
  const dirty = code !== null && hasUnsavedChanges(code, savedCode);

  const blocker = useDraftKeeper(functionId, code, dirty, saved?.number ?? null);

  const markers = useMemo(() => problemsToMarkers(code ?? "", problems), [code, problems]);
  // Problems show while typing (checked once typing pauses), not only on save.
  const check = useCodeCheck(code);
  useEffect(() => {
    if (check.data) dispatch({ type: "checked", problems: check.data.problems });
  }, [check.data]);
  const save = useSaveRewardVersion(functionId);
  const onSaved = {
    onSuccess: (result: RewardVersion | RewardCheck) => {
      if ("problems" in result) {
        dispatch({ type: "checked", problems: result.problems });
        return;
      }
      clearDraft(functionId);
      dispatch({ type: "saved", key: `${functionId}:${result.number}`, number: result.number });
      setOpenNumber(null);
    },
    onError: (error: Error) => dispatch({ type: "saveFailed", message: error.message }),
  };

  const [testRunId, setTestRunId] = useState<number | null>(null);
  const [testedDataset, setTestedDataset] = useState<number | null>(null);
  const testRun = useTestRun(testRunId);
  const testedVersion = versions.data?.find((v) => v.id === testRun.data?.reward_version) ?? saved;

  if (fn.isError || versions.isError) {
    return (
      <ErrorState
        title={`Could not load reward function #${functionId}`}
        error={fn.error ?? versions.error}
        onRetry={() => void Promise.all([fn.refetch(), versions.refetch()])}
        back={{ to: `/p/${slug}/reward-functions`, label: "All reward functions" }}
      />
    );
  }
  const trainHref =
    testedVersion !== null
      ? `/p/${slug}/runs/new?reward_version=${testedVersion.id}` +
        (testedDataset !== null ? `&dataset_version=${testedDataset}` : "")
      : null;
  return (
    <Page>
      <PageHeader
        title={fn.data ? fn.data.name : "Reward function"}
        description={
          <>
            <Link to={`/p/${slug}/reward-functions`}>Reward functions</Link>
            {saved ? ` · editing from v${saved.number}` : " · no versions yet"}
            {dirty ? " · unsaved changes" : ""}
          </>
        }
        actions={
          trainHref ? (
            <Link className={styles.train} to={trainHref}>
              Train on v{testedVersion?.number}
              {testedDataset !== null ? " with the tested dataset" : ""}
            </Link>
          ) : null
        }
      />
      {blocker.state === "blocked" ? (
        <div className={styles.blocker} role="alertdialog" aria-label="Unsaved changes">
          <p>You have unsaved changes. They are kept as a draft in this browser.</p>
          <Button onClick={() => blocker.reset()}>Stay</Button>
          <Button variant="primary" onClick={() => blocker.proceed()}>
            Leave (keep the draft)
          </Button>
        </div>
      ) : null}
      {notice ? (
        <p className={styles.notice} role="status">
          {notice}{" "}
          {restoredDraft(editor) ? (
            <button
              type="button"
              onClick={() => {
                clearDraft(functionId);
                dispatch({ type: "discardDraft", savedCode });
              }}
            >
              Discard the draft
            </button>
          ) : null}
        </p>
      ) : null}
      <Columns first="1.15fr">
        <section className={styles.editorColumn} aria-label="Editor">
          <div className={styles.editorBox}>
            {code === null ? (
              <div className={styles.placeholder}>Loading the code…</div>
            ) : (
              <LazyCodeEditor value={code} onChange={(text) => dispatch({ type: "type", code: text })} markers={markers} label="Reward code" />
            )}
          </div>
          {problems.length > 0 ? (
            <ul className={styles.problems} aria-label="Problems">
              {problems.map((p, i) => (
                <li key={i}>
                  <strong>
                    Line {p.line}, column {p.column}:
                  </strong>{" "}
                  {p.message}
                </li>
              ))}
            </ul>
          ) : null}
          <form
            className={styles.saveRow}
            onSubmit={(event) => {
              event.preventDefault();
              dispatch({ type: "saveStarted" });
              save.mutate({ code: code ?? "", message }, onSaved);
            }}
          >
            <input
              className={styles.message}
              aria-label="Version message"
              placeholder="What changed in this version?"
              maxLength={300}
              value={message}
              onChange={(e) => dispatch({ type: "message", message: e.target.value })}
            />
            <Button type="submit" variant="primary" disabled={code === null || save.isPending || (!dirty && saved !== null)}>
              {save.isPending ? "Saving…" : `Save as v${(latest?.number ?? 0) + 1}`}
            </Button>
          </form>
          {saveError && problems.length === 0 ? (
            <Notice tone="error">{saveError}</Notice>
          ) : null}
        </section>
        <div className={styles.sideColumn}>
          <TestPanel
            project={slug}
            functionId={functionId}
            version={saved}
            testRunId={testRunId}
            onTestRun={(id, dataset) => {
              setTestRunId(id);
              setTestedDataset(dataset);
            }}
          />
          {testRun.data ? <ComparePanel key={testRun.data.id} base={testRun.data} versions={versions.data ?? []} /> : null}
        </div>
      </Columns>
      {/* Below both columns: the diff of two versions gets the page's full width. */}
      <VersionsPanel
        functionId={functionId}
        versions={versions.data ?? []}
        onOpen={(number) => {
          if (dirty && code !== null) saveDraft(functionId, code, saved?.number ?? null);
          dispatch({ type: "reopen" });
          setOpenNumber(number);
        }}
      />
    </Page>
  );
}
