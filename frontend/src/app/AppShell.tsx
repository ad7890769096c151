import type { ReactNode } from "react";
import { Link, NavLink, Outlet, useNavigate, useParams } from "react-router";

import { Button } from "../components/Button";
import { ChatIcon, CheckCircleIcon, DatasetsIcon, ExternalIcon, Logo, ModelIcon, RewardIcon, RunsIcon, StatusIcon, SweepIcon, UsersIcon } from "../components/icons";
import { useToast } from "../components/Toast";
import { useMe, useSignOut } from "../features/auth/hooks";
import { HealthIndicator } from "../features/health/components/HealthIndicator";
import { PendingInvitations } from "../features/projects/components/PendingInvitations";
import { ProjectSwitcher } from "../features/projects/components/ProjectSwitcher";
import { lastProject } from "../features/projects/pages/HomeRedirect";
import styles from "./AppShell.module.css";

type NavItem = { to: string; label: string; icon: ReactNode };

function projectNav(slug: string): NavItem[] {
  return [
    { to: `/p/${slug}/runs`, label: "Runs", icon: <RunsIcon /> },
    { to: `/p/${slug}/sweeps`, label: "Sweeps", icon: <SweepIcon /> },
    { to: `/p/${slug}/evaluations`, label: "Evaluations", icon: <CheckCircleIcon /> },
    { to: `/p/${slug}/playground`, label: "Playground", icon: <ChatIcon /> },
    { to: `/p/${slug}/models`, label: "Models", icon: <ModelIcon /> },
    { to: `/p/${slug}/datasets`, label: "Datasets", icon: <DatasetsIcon /> },
    { to: `/p/${slug}/reward-functions`, label: "Reward functions", icon: <RewardIcon /> },
    { to: `/p/${slug}/members`, label: "Members", icon: <UsersIcon /> },
  ];
}

const ACCOUNT_NAV: NavItem[] = [
  { to: "/tokens", label: "API tokens", icon: <ExternalIcon /> },
  { to: "/status", label: "System status", icon: <StatusIcon /> },
];

export function AppShell() {
  // Account pages (tokens, status) keep the last project's sections in the nav.
  const slug = useParams().slug ?? lastProject();
  return (
    <div className={styles.shell}>
      <a className={styles.skip} href="#main">
        Skip to content
      </a>
      <header className={styles.topbar}>
        <div className={styles.topbarStart}>
          <Link to="/" className={styles.brand}>
            <Logo />
            <span>RL Studio</span>
          </Link>
          <ProjectSwitcher />
        </div>
        <div className={styles.topbarEnd}>
          <HealthIndicator />
          <a className={styles.docsLink} href="/api/docs/" target="_blank" rel="noreferrer">
            API docs
            <ExternalIcon size={14} />
          </a>
          <UserMenu />
        </div>
      </header>
      {/* The column runs the page's full height (its background and border); the nav
          inside it stays in view while the page scrolls. */}
      <div className={styles.sidebarColumn} data-testid="sidebar-column">
        <nav className={styles.sidebar} aria-label="Main">
          {slug ? <NavSection title="Project" items={projectNav(slug)} /> : null}
          <NavSection title="Account" items={ACCOUNT_NAV} />
        </nav>
      </div>
      <main id="main" className={styles.main}>
        <div className={styles.content}>
          <PendingInvitations />
          <Outlet />
        </div>
      </main>
    </div>
  );
}

function UserMenu() {
  const me = useMe();
  const signOut = useSignOut();
  const navigate = useNavigate();
  const toast = useToast();
  if (!me.data) return null;
  return (
    <div className={styles.user}>
      <span className={styles.username}>{me.data.username}</span>
      <Button
        onClick={() =>
          signOut.mutate(undefined, { onSuccess: () => void navigate("/sign-in"), onError: (e) => toast.error(e) })
        }
      >
        Sign out
      </Button>
    </div>
  );
}

function NavSection({ title, items }: { title: string; items: NavItem[] }) {
  return (
    <div className={styles.navSection}>
      <p className={styles.navTitle}>{title}</p>
      <ul className={styles.navList}>
        {items.map((item) => (
          <li key={item.to}>
            <NavLink to={item.to} className={({ isActive }) => `${styles.navLink} ${isActive ? styles.active : ""}`}>
              {item.icon}
              <span>{item.label}</span>
            </NavLink>
          </li>
        ))}
      </ul>
    </div>
  );
}
