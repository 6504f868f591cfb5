export function AdminDashboard() {
  return <p>Coming.</p>;
}
