export function GprDetail() {
  return <p>Coming.</p>;
}
