import { useEffect, useState, type CSSProperties } from "react";
import { useSearchParams } from "react-router";

import { errorMessage } from "../../../api/client";
import { Button, ButtonLink } from "../../../components/Button";
import { EmptyState } from "../../../components/EmptyState";
import { ErrorState } from "../../../components/ErrorState";
import { fieldErrorsAt } from "../../../components/Field";
import { ChatIcon } from "../../../components/icons";
import { Page } from "../../../components/Layout";
import { Notice } from "../../../components/Notice";
import { PageHeader } from "../../../components/PageHeader";
import { Loading } from "../../../components/Spinner";
import { useProjectSlug } from "../../projects/hooks";
import { ChatColumn } from "../components/ChatColumn";
import { Composer } from "../components/Composer";
import { SettingsForm } from "../components/SettingsForm";
import { usePlaygroundChat, usePlaygroundModels, useWarmModel } from "../hooks";
import { targetOf } from "../lib/chat";
import { DEFAULT_SETTINGS, samplingOf } from "../lib/settings";
import styles from "../playground.module.css";

/**
 * Chat with a model or checkpoint of the project, or two side by side. The picked
 * models live in the URL (`?model=checkpoint:12&compare=model:3`), so a link from a
 * run's checkpoint opens the chat with it.
 */
export function PlaygroundPage() {
  const slug = useProjectSlug();
  const models = usePlaygroundModels(slug);
  const [params, setParams] = useSearchParams();
  const [settings, setSettings] = useState(DEFAULT_SETTINGS);
  const list = models.data ?? [];
  const model = params.get("model") || list[0]?.key || "";
  const compare = params.get("compare") ?? "";
  const targets = [model, compare].filter(Boolean);
  const chat = usePlaygroundChat(slug, targets);
  const warm = useWarmModel(slug);

  // Load the picked models now: the first message then waits less (or not at all).
  const picked = targets.join("|");
  const known = list.length > 0;
  useEffect(() => {
    if (!known) return;
    for (const key of picked.split("|").filter(Boolean)) warm.mutate(targetOf(key));
    // eslint-disable-next-line react-hooks/exhaustive-deps -- once per pick, not per render
  }, [picked, known]);

  const pick = (name: "model" | "compare") => (key: string) => {
    const next = new URLSearchParams(params);
    if (key) next.set(name, key);
    else next.delete(name);
    setParams(next, { replace: true });
  };
  const error = chat.send.error;
  const header = (
    <PageHeader
      title="Playground"
      description="Chat with a model or checkpoint of the project; compare two side by side."
      actions={
        <Button onClick={chat.clear} disabled={chat.columns.every((c) => c.turns.length === 0)}>
          New chat
        </Button>
      }
    />
  );
  if (models.isPending) return <Page>{header}<Loading what="the project's models" /></Page>;
  if (models.error) {
    return (
      <Page>
        {header}
        <ErrorState title="Could not load the project's models" error={models.error} onRetry={() => void models.refetch()} />
      </Page>
    );
  }
  if (list.length === 0) {
    return (
      <Page>
        {header}
        <EmptyState icon={<ChatIcon size={26} />} title="No models to chat with" action={<ButtonLink to={`/p/${slug}/models`}>Add a model</ButtonLink>}>
          Add a model to the project, or train a run: its checkpoints appear here.
        </EmptyState>
      </Page>
    );
  }
  return (
    <Page>
      {header}
      <SettingsForm
        models={list}
        model={model}
        compare={compare}
        onModel={pick("model")}
        onCompare={pick("compare")}
        settings={settings}
        onSettings={setSettings}
        errors={(path) => fieldErrorsAt(error, path)}
      />
      <div className={styles.chats} style={{ "--columns": chat.columns.length } as CSSProperties}>
        {chat.columns.map((column) => (
          <ChatColumn key={column.target} column={column} model={list.find((m) => m.key === column.target)} slug={slug} />
        ))}
      </div>
      {error ? <Notice tone="error">{errorMessage(error)}</Notice> : null}
      <Composer
        answering={chat.answering}
        disabled={targets.length === 0}
        onSend={(message) => chat.send.mutate({ message, settings: { system: settings.system, sampling: samplingOf(settings) } })}
        onStop={chat.stop}
      />
    </Page>
  );
}
