import { Navigate, Route, Routes } from 'react-router-dom';
import { useSession } from './session';
import { Layout } from './components/Layout';
import { Login } from './pages/Login';
import { Home } from './pages/Home';
import { CreateGpr } from './pages/CreateGpr';
import { Queue } from './pages/Queue';
import { GprDetail } from './pages/GprDetail';
import { Workloads } from './pages/Workloads';
import { Events } from './pages/Events';
import { Notifications } from './pages/Notifications';
import { Workspaces } from './pages/Workspaces';
import { Usage } from './pages/Usage';
import { Gpus } from './pages/Gpus';
import { GpuDashboard } from './pages/GpuDashboard';
import { AdminDashboard } from './pages/admin/Dashboard';
import { Clusters } from './pages/admin/Clusters';
import { Slices } from './pages/admin/Slices';
import { Tokens } from './pages/admin/Tokens';
import { AdminQueue } from './pages/admin/AdminQueue';
import { SingleSignOn } from './pages/admin/SingleSignOn';
import type { ReactNode } from 'react';

function AdminOnly({ children }: { children: ReactNode }) {
  const { viewer } = useSession();
  if (viewer?.role !== 'ADMIN') return <div className="error">This page is for admins.</div>;
  return <>{children}</>;
}

export function App() {
  const { viewer } = useSession();
  if (!viewer) return <Login />;
  const admin = viewer.role === 'ADMIN';
  return (
    <Routes>
      <Route element={<Layout />}>
        <Route index element={admin ? <Navigate to="/admin" replace /> : <Home />} />
        <Route path="home" element={<Home />} />
        <Route path="gprs/new" element={<CreateGpr />} />
        <Route path="queue" element={<Queue />} />
        <Route path="queue/:sliceId" element={<Queue />} />
        <Route path="gprs/:gprId" element={<GprDetail />} />
        <Route path="workloads" element={<Workloads />} />
        <Route path="events" element={<Events />} />
        <Route path="notifications" element={<Notifications />} />
        <Route path="workspaces" element={<Workspaces />} />
        <Route path="usage" element={<Usage />} />
        <Route path="gpus" element={<Gpus />} />
        <Route path="gpus/:gpuId" element={<GpuDashboard />} />
        <Route path="admin" element={<AdminOnly><AdminDashboard /></AdminOnly>} />
        <Route path="admin/clusters" element={<AdminOnly><Clusters /></AdminOnly>} />
        <Route path="admin/slices" element={<AdminOnly><Slices /></AdminOnly>} />
        <Route path="admin/tokens" element={<AdminOnly><Tokens /></AdminOnly>} />
        <Route path="admin/queue" element={<AdminOnly><AdminQueue /></AdminOnly>} />
        <Route path="admin/sso" element={<AdminOnly><SingleSignOn /></AdminOnly>} />
        <Route path="*" element={<div className="error">No such page. <a href="/">Go home</a>.</div>} />
      </Route>
    </Routes>
  );
}
