export function Workloads() {
  return <p>Coming.</p>;
}
