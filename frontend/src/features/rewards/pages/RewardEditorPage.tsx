/**
 * One reward function: the editor (with its draft, problems and save), the test
 * panel beside it, versions with their diff, the A/B view, and "Train on this".
 */
import { useEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router";

import { Button } from "../../../components/Button";
import { Columns, Page } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { PageHeader } from "../../../components/PageHeader";
import type { RewardCheck, RewardVersion } from "../api";
import { ComparePanel } from "../components/ComparePanel";
import { LazyCodeEditor } from "../components/LazyEditors";
import { TestPanel } from "../components/TestPanel";
import { VersionsPanel } from "../components/VersionsPanel";
import { useCodeCheck, useRewardFunction, useRewardVersion, useRewardVersions, useSaveRewardVersion, useTestRun } from "../hooks";
import { clearDraft, EMPTY_FUNCTION, hasUnsavedChanges, loadDraft, openingText, saveDraft } from "../lib/drafts";
import { problemFromMessage, problemsToMarkers, type Problem } from "../lib/markers";
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

  // The editor's text: opened once per version shown, from a draft if one differs.
  const [code, setCode] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const openedFor = useRef<string | null>(null);
  const saved: RewardVersion | null = shown.data ?? null;
  useEffect(() => {
    if (versions.isPending || (shownNumber !== null && !shown.data)) return;
    const key = `${functionId}:${shownNumber ?? "none"}`;
    if (openedFor.current === key) return;
    openedFor.current = key;
    if (openNumber !== null) {
      setCode(shown.data?.code ?? ""); // explicitly opened: the version as saved
      setNotice(null);
      return;
    }
    const opening = openingText(
      shown.data ? { code: shown.data.code, number: shown.data.number } : null,
      loadDraft(functionId),
    );
    setCode(opening.code);
    setNotice(
      opening.fromDraft
        ? opening.draftIsBehind
          ? "Restored your unsaved draft. It started from an older version than the latest one: compare before saving."
          : "Restored your unsaved draft."
        : null,
    );
  }, [functionId, openNumber, shownNumber, shown.data, versions.isPending]);

  const savedCode = saved?.code ?? EMPTY_FUNCTION; // no version yet: the stub it opened with
  const dirty = code !== null && hasUnsavedChanges(code, savedCode);

  const blocker = useDraftKeeper(functionId, code, dirty, saved?.number ?? null);

  const [problems, setProblems] = useState<Problem[]>([]);
  const [message, setMessage] = useState("");
  const [saveError, setSaveError] = useState<string | null>(null);
  const markers = useMemo(() => problemsToMarkers(code ?? "", problems), [code, problems]);
  // Problems show while typing (checked once typing pauses), not only on save.
  const check = useCodeCheck(code);
  useEffect(() => {
    if (check.data) setProblems(check.data.problems);
  }, [check.data]);
  const save = useSaveRewardVersion(functionId);
  const onSaved = {
    onSuccess: (result: RewardVersion | RewardCheck) => {
      if ("problems" in result) {
        setProblems(result.problems);
        return;
      }
      setProblems([]);
      setMessage("");
      clearDraft(functionId);
      openedFor.current = `${functionId}:${result.number}`;
      setOpenNumber(null);
      setNotice(`Saved as version ${result.number}.`);
    },
    onError: (error: Error) => {
      if (/line \d+/.test(error.message)) setProblems([problemFromMessage(error.message)]);
      setSaveError(error.message);
    },
  };

  const [testRunId, setTestRunId] = useState<number | null>(null);
  const [testedDataset, setTestedDataset] = useState<number | null>(null);
  const testRun = useTestRun(testRunId);
  const testedVersion = versions.data?.find((v) => v.id === testRun.data?.reward_version) ?? saved;

  if (fn.isError || versions.isError) {
    return (
      <Notice tone="error">{(fn.error ?? versions.error)?.message}</Notice>
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
          {notice.startsWith("Restored") ? (
            <button
              type="button"
              onClick={() => {
                clearDraft(functionId);
                setCode(savedCode);
                setNotice(null);
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
              <LazyCodeEditor value={code} onChange={setCode} markers={markers} label="Reward code" />
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
              setSaveError(null);
              save.mutate({ code: code ?? "", message }, onSaved);
            }}
          >
            <input
              className={styles.message}
              aria-label="Version message"
              placeholder="What changed in this version?"
              maxLength={300}
              value={message}
              onChange={(e) => setMessage(e.target.value)}
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
          openedFor.current = null;
          setOpenNumber(number);
        }}
      />
    </Page>
  );
}
