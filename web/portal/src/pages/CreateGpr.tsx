export function CreateGpr() {
  return <p>Coming.</p>;
}
