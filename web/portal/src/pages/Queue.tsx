export function Queue() {
  return <p>Coming.</p>;
}
