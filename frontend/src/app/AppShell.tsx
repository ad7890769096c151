import type { ReactNode } from "react";
import { Link, NavLink, Outlet } from "react-router";

import { DatasetsIcon, ExternalIcon, Logo, RewardIcon, RunsIcon, StatusIcon } from "../components/icons";
import { HealthIndicator } from "../features/health/components/HealthIndicator";
import styles from "./AppShell.module.css";

type NavItem = { to: string; label: string; icon: ReactNode };

const WORK_NAV: NavItem[] = [
  { to: "/runs", label: "Runs", icon: <RunsIcon /> },
  { to: "/datasets", label: "Datasets", icon: <DatasetsIcon /> },
  { to: "/reward-functions", label: "Reward functions", icon: <RewardIcon /> },
];

const ADMIN_NAV: NavItem[] = [{ to: "/status", label: "System status", icon: <StatusIcon /> }];

export function AppShell() {
  return (
    <div className={styles.shell}>
      <a className={styles.skip} href="#main">
        Skip to content
      </a>
      <header className={styles.topbar}>
        <Link to="/" className={styles.brand}>
          <Logo />
          <span>RL Studio</span>
        </Link>
        <div className={styles.topbarEnd}>
          <HealthIndicator />
          <a className={styles.docsLink} href="/api/docs/" target="_blank" rel="noreferrer">
            API docs
            <ExternalIcon size={14} />
          </a>
        </div>
      </header>
      <nav className={styles.sidebar} aria-label="Main">
        <NavSection title="Workspace" items={WORK_NAV} />
        <NavSection title="Admin" items={ADMIN_NAV} />
      </nav>
      <main id="main" className={styles.main}>
        <div className={styles.content}>
          <Outlet />
        </div>
      </main>
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
            <NavLink
              to={item.to}
              className={({ isActive }) => `${styles.navLink} ${isActive ? styles.active : ""}`}
            >
              {item.icon}
              <span>{item.label}</span>
            </NavLink>
          </li>
        ))}
      </ul>
    </div>
  );
}
