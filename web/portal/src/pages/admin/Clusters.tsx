export function Clusters() {
  return <p>Coming.</p>;
}
