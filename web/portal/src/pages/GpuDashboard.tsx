export function GpuDashboard() {
  return <p>Coming.</p>;
}
