import { useContext } from 'react';
import { NavLink, Outlet } from 'react-router-dom';
import { LinkContext } from '../api/context';
import { useSession } from '../session';
import { Bell } from './Bell';

const USER_LINKS: [string, string][] = [
  ['/home', 'Home'],
  ['/gprs/new', 'New GPR'],
  ['/queue', 'Queue'],
  ['/workloads', 'Workloads'],
  ['/gpus', 'GPUs'],
  ['/events', 'Events'],
  ['/notifications', 'Notifications'],
  ['/workspaces', 'Workspaces'],
  ['/usage', 'Usage'],
];
const ADMIN_LINKS: [string, string][] = [
  ['/admin', 'Dashboard'],
  ['/admin/clusters', 'Clusters'],
  ['/admin/slices', 'Slices'],
  ['/admin/queue', 'Global queue'],
  ['/usage', 'Usage'],
  ['/workspaces', 'Requests'],
  ['/admin/tokens', 'Tokens'],
  ['/admin/sso', 'SSO'],
  ['/gpus', 'GPUs'],
  ['/events', 'Events'],
  ['/notifications', 'Notifications'],
];

const LINK_LABEL = { connecting: 'Connecting', live: 'Live', reconnecting: 'Reconnecting' } as const;

export function Layout() {
  const { viewer, logout } = useSession();
  const link = useContext(LinkContext);
  const links = viewer?.role === 'ADMIN' ? ADMIN_LINKS : USER_LINKS;
  return (
    <div className="shell">
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="topbar">
        <span className="brand">EGS</span>
        <nav aria-label="Main">
          {links.map(([to, label]) => (
            <NavLink key={to} to={to} end={to === '/admin'}>
              {label}
            </NavLink>
          ))}
        </nav>
        <span className={`link-state link-${link}`} title="Live updates">
          {LINK_LABEL[link]}
        </span>
        <Bell />
        <span className="who">
          {viewer?.name} <span className="muted">({viewer?.role.toLowerCase()})</span>
        </span>
        <button type="button" onClick={() => logout()}>
          Sign out
        </button>
      </header>
      <main id="main" tabIndex={-1}>
        <Outlet />
      </main>
    </div>
  );
}
