import { useState, type FormEvent } from "react";
import { Navigate, useNavigate, useSearchParams } from "react-router";

import { FieldErrors } from "../../../api/errors";
import { Button } from "../../../components/Button";
import { fieldErrorsAt, TextField } from "../../../components/Field";
import { Logo } from "../../../components/icons";
import { Notice } from "../../../components/Notice";
import { useMe, useSignIn } from "../hooks";
import styles from "./SignInPage.module.css";

/** Only same-site paths may follow a sign-in (no open redirect). */
export function safeNext(next: string | null): string {
  return next && next.startsWith("/") && !next.startsWith("//") ? next : "/";
}

export function SignInPage() {
  const [params] = useSearchParams();
  const next = safeNext(params.get("next"));
  const navigate = useNavigate();
  const me = useMe();
  const signIn = useSignIn();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");

  if (me.data) return <Navigate to={next} replace />;

  function onSubmit(event: FormEvent) {
    event.preventDefault();
    signIn.mutate({ username, password }, { onSuccess: () => void navigate(next, { replace: true }) });
  }

  const error = signIn.error;
  return (
    <main className={styles.page}>
      <title>Sign in · RL Studio</title>
      <form className={styles.panel} onSubmit={onSubmit} aria-label="Sign in">
        <div className={styles.brand}>
          <Logo />
          RL Studio
        </div>
        <h1 className={styles.title}>Sign in</h1>
        {error && !(error instanceof FieldErrors) ? (
          <Notice tone="error" className={styles.error}>
            {error.message}
          </Notice>
        ) : null}
        <TextField label="Username" errors={fieldErrorsAt(error, "username")} autoComplete="username" value={username} onChange={setUsername} required autoFocus />
        <TextField label="Password" errors={fieldErrorsAt(error, "password")} type="password" autoComplete="current-password" value={password} onChange={setPassword} required />
        <Button type="submit" variant="primary" className={styles.submit} disabled={signIn.isPending}>
          {signIn.isPending ? "Signing in…" : "Sign in"}
        </Button>
        <p className={styles.hint}>
          First time here? <code>make up</code> printed the admin&apos;s username and password once in its terminal (or set <code>RLSTUDIO_ADMIN_USER</code> / <code>RLSTUDIO_ADMIN_PASSWORD</code>).
        </p>
      </form>
    </main>
  );
}
