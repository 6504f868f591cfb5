export function Slices() {
  return <p>Coming.</p>;
}
