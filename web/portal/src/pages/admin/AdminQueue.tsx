export function AdminQueue() {
  return <p>Coming.</p>;
}
